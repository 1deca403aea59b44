/**
 * For the providers' own tests: a sign-in run from the authorization URL to the callback with a
 * browser the test plays, and the refusals a provider gives (ProviderError at sign-in,
 * LatchkeyError('configuration_invalid') for an app it cannot be built from).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { isLatchkeyError } from '../core/errors.js';
import { ProviderError, type RedirectProvider } from '../socialaccount/providers/provider.js';

/** The whole redirect flow: the authorization URL, the browser at the provider (`follow`), the callback. */
export async function signInThrough(provider: RedirectProvider, redirectUri: string, follow: (url: URL) => Promise<URL>) {
  const state = randomUUID();
  const { url, pending } = await provider.authorizationUrl({ redirectUri, state });
  const callbackUrl = await follow(url);
  return provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: state, pending });
}

/** The ProviderError a promise rejects with (failing the test if it resolves or throws anything else). */
export async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error: unknown = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

/** The message of the LatchkeyError('configuration_invalid') `make` throws (failing the test if it throws nothing or anything else). */
export function configurationError(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    if (isLatchkeyError(error, 'configuration_invalid')) return error.message;
    throw error;
  }
  throw new Error('expected a configuration_invalid refusal, and it was accepted');
}

/** The path a fetch was asked for. */
export function pathOf(input: string | URL | Request): string {
  return new URL(input instanceof Request ? input.url : input).pathname;
}
