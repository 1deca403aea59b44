import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { SettingValues } from '../config/settings.js';
import type { HeadlessResponse, HeadlessTestClient } from './headless.js';
import { SoftwareAuthenticator, type CeremonyOverrides } from './webauthn-authenticator.js';

/**
 * Test support for the headless API's WebAuthn routes: a SoftwareAuthenticator answering the
 * options they give as a single-page app would (the options under `publicKey`, the answer posted
 * as `credential`).
 */

/** Security keys and passkey login on, as allauth's example backend has them. */
export const WEBAUTHN_SETTINGS: Partial<SettingValues> = {
  MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'],
  MFA_PASSKEY_LOGIN_ENABLED: true,
};

/** The site's origin in tests (SITE_URL), where the browser runs. */
export const TEST_ORIGIN = 'http://testserver';

export function testAuthenticator(): SoftwareAuthenticator {
  return new SoftwareAuthenticator(TEST_ORIGIN);
}

/** The request options a response carries. */
export function requestOptionsOf(response: HeadlessResponse): PublicKeyCredentialRequestOptionsJSON {
  return (response.body.data as { request_options: { publicKey: PublicKeyCredentialRequestOptionsJSON } }).request_options.publicKey;
}

/** The creation options a response carries. */
export function creationOptionsOf(response: HeadlessResponse): PublicKeyCredentialCreationOptionsJSON {
  return (response.body.data as { creation_options: { publicKey: PublicKeyCredentialCreationOptionsJSON } }).creation_options.publicKey;
}

/** GET the options at `path`, let the authenticator answer, POST (or `method`) the answer back. */
export async function proveKey(
  api: HeadlessTestClient,
  path: string,
  authenticator: SoftwareAuthenticator,
  overrides: CeremonyOverrides & { credentialId?: string; counter?: number } = {},
): Promise<HeadlessResponse> {
  const options = await api.get(path);
  if (options.status !== 200) throw new Error(`GET ${path} answered ${options.status}`);
  return api.post(path, { credential: authenticator.get(requestOptionsOf(options), overrides) });
}

/** Adds a key through account/authenticators/webauthn (a passkey unless `passwordless` is false). */
export async function addKeyThroughApi(
  api: HeadlessTestClient,
  authenticator: SoftwareAuthenticator,
  options: { passwordless?: boolean; name?: string; overrides?: CeremonyOverrides } = {},
): Promise<HeadlessResponse> {
  const path = `/account/authenticators/webauthn${options.passwordless === false ? '' : '?passwordless'}`;
  const creation = await api.get(path);
  if (creation.status !== 200) throw new Error(`GET ${path} answered ${creation.status}`);
  const credential = authenticator.create(creationOptionsOf(creation), options.overrides);
  return api.post('/account/authenticators/webauthn', { ...(options.name === undefined ? {} : { name: options.name }), credential });
}
