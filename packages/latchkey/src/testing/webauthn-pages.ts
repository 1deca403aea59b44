import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { PageClient } from './pages.js';
import type { CeremonyOverrides, SoftwareAuthenticator } from './webauthn-authenticator.js';

/**
 * What static/webauthn.js does in a browser, for page tests through inject(): ask a page for a
 * ceremony's options as JSON, let a software authenticator answer them, and post the answer in
 * the form's `credential` field.
 */

async function optionsJson(client: PageClient, path: string): Promise<Record<string, unknown>> {
  const response = await client.get(path, { accept: 'application/json' });
  if (response.statusCode !== 200) throw new Error(`${path} gave no options: ${response.statusCode} ${response.body}`);
  return JSON.parse(response.body) as Record<string, unknown>;
}

export async function creationOptionsFrom(client: PageClient, path: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return ((await optionsJson(client, path)).creation_options as { publicKey: PublicKeyCredentialCreationOptionsJSON }).publicKey;
}

export async function requestOptionsFrom(client: PageClient, path: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return ((await optionsJson(client, path)).request_options as { publicKey: PublicKeyCredentialRequestOptionsJSON }).publicKey;
}

/** Fetches `optionsPath`'s request options, has the authenticator answer them, and posts the answer to `formPath`. */
export async function postAssertion(
  client: PageClient,
  authenticator: SoftwareAuthenticator,
  optionsPath: string,
  formPath = optionsPath,
  fields: Record<string, string> = {},
  overrides: CeremonyOverrides & { credentialId?: string; counter?: number } = {},
) {
  const assertion = authenticator.get(await requestOptionsFrom(client, optionsPath), overrides);
  return client.post(formPath, { ...fields, credential: JSON.stringify(assertion) });
}

/** Adds a key through the add page, as a person would: `passwordless` ticks the passkey box. */
export async function addKeyThroughPage(client: PageClient, authenticator: SoftwareAuthenticator, options: { name?: string; passwordless?: boolean } = {}) {
  const path = `/accounts/2fa/webauthn/add/${options.passwordless ? '?passwordless=on' : ''}`;
  const credential = authenticator.create(await creationOptionsFrom(client, path));
  return client.post('/accounts/2fa/webauthn/add/', {
    name: options.name ?? '',
    ...(options.passwordless ? { passwordless: 'on' } : {}),
    credential: JSON.stringify(credential),
  });
}

/** The form errors shown under a field (`__all__` for the form's own). */
export function fieldErrors(body: string, name: string): string[] {
  const list = new RegExp(`<ul class="lk-errors" id="${name}-errors">([\\s\\S]*?)</ul>`).exec(body);
  return list ? [...list[1]!.matchAll(/<li>([^<]*)<\/li>/g)].map((match) => match[1]!) : [];
}
