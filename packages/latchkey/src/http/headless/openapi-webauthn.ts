import type { Settings } from '../../config/settings.js';

/**
 * The WebAuthn part of the served OpenAPI document (openapi.ts): passkeys and security keys. The
 * operations are listed only where the server registers them (security keys in
 * MFA_SUPPORTED_TYPES; passkey login and signup on their own settings), and the shapes are
 * allauth.headless's: the options as `{publicKey: ...}`, the browser's answer as `credential`.
 */

type Json = Record<string, unknown>;
type Method = 'get' | 'post' | 'put' | 'delete';

/** An operation as openapi.ts describes one (the same fields, kept structural to avoid an import cycle). */
interface WebauthnOperation {
  tag: 'Authentication' | 'Two-factor authentication' | 'Account: two-factor';
  summary: string;
  description: string;
  parameters?: string[];
  requestBody?: string;
  responses: Record<string, Json>;
  limited?: boolean;
  busy?: boolean;
}

const ref = (kind: 'schemas' | 'responses' | 'requestBodies', name: string): Json => ({ $ref: `#/components/${kind}/${name}` });
const schema = (name: string): Json => ref('schemas', name);
const object = (properties: Json, required: string[] = Object.keys(properties)): Json => ({ type: 'object', properties, required });
const status = (code: number): Json => ({ type: 'integer', enum: [code], description: 'The HTTP status, repeated.' });
const json = (description: string, body: Json): Json => ({ description, content: { 'application/json': { schema: body } } });
const requestBody = (description: string, body: Json): Json => ({ description, required: true, content: { 'application/json': { schema: body } } });

const requestOptions = ref('responses', 'WebAuthnRequestOptions');
const creationOptions = ref('responses', 'WebAuthnCreationOptions');
const authenticated = ref('responses', 'Authenticated');
const unauthenticated = ref('responses', 'Unauthenticated');
const orReauthentication = ref('responses', 'AuthenticationOrReauthentication');
const error = ref('responses', 'Error');
const conflict = ref('responses', 'Conflict');
const notFound = ref('responses', 'NotFound');

const SECURITY_KEYS: Record<string, Partial<Record<Method, WebauthnOperation>>> = {
  '/auth/webauthn/authenticate': {
    get: { tag: 'Two-factor authentication', summary: "Options for the login's security key", description: 'For the session whose login waits at `mfa_authenticate` (401 otherwise): the request options naming the user\'s keys, for `navigator.credentials.get()`; 404 when the user has none.', responses: { 200: requestOptions, 401: unauthenticated, 404: notFound } },
    post: { tag: 'Two-factor authentication', summary: 'Give the login\'s security key', description: 'The browser\'s answer to those options, checked against them (this session\'s challenge, once, within five minutes), the site\'s origin and relying party, and the key\'s signature counter. Counted against the login limits like a code. 200, or 401 at the next step (`mfa_trust`); 400 `incorrect_code` for a bad answer.', requestBody: 'WebAuthnCredential', limited: true, responses: { 200: authenticated, 400: error, 401: unauthenticated } },
  },
  '/auth/webauthn/reauthenticate': {
    get: { tag: 'Two-factor authentication', summary: 'Options for confirming identity with a key', description: 'The signed-in user\'s request options (the `mfa_reauthenticate` flow lists `webauthn` when they have a key); 404 when they have none.', responses: { 200: requestOptions, 401: unauthenticated, 404: notFound } },
    post: { tag: 'Two-factor authentication', summary: 'Confirm identity with a key', description: 'Renews the proof of identity with a security key\'s answer to those options.', requestBody: 'WebAuthnCredential', limited: true, responses: { 200: authenticated, 400: error, 401: orReauthentication } },
  },
  '/account/authenticators/webauthn': {
    get: { tag: 'Account: two-factor', summary: 'Options for a new security key', description: 'Creation options for `navigator.credentials.create()`; with `?passwordless` (present at all) a passkey: discoverable, verifying the person. Needs a recent proof of identity (401) and a verified address (409).', parameters: ['Passwordless'], responses: { 200: creationOptions, 401: orReauthentication, 409: conflict } },
    post: { tag: 'Account: two-factor', summary: 'Add a security key', description: 'The browser\'s new credential (and a name). Recovery codes are made with the first second factor (`meta.recovery_codes_generated`); the session gets a new id or token.', requestBody: 'AddWebAuthnAuthenticator', responses: { 200: ref('responses', 'AddedWebAuthnAuthenticator'), 400: error, 401: orReauthentication, 409: conflict } },
    put: { tag: 'Account: two-factor', summary: 'Rename a security key', description: 'By its id, as listed; needs a recent proof of identity. A key that is not the user\'s is 404.', requestBody: 'UpdateWebAuthn', responses: { 200: ref('responses', 'WebAuthnAuthenticator'), 400: error, 401: orReauthentication, 404: notFound } },
    delete: { tag: 'Account: two-factor', summary: 'Remove security keys', description: 'By their ids, all or none (404 when one is not the user\'s); the recovery codes go too when no other second factor remains. Needs a recent proof of identity.', requestBody: 'DeleteWebAuthn', responses: { 200: ref('responses', 'StatusOK'), 400: error, 401: orReauthentication, 404: notFound } },
  },
};

const PASSKEY_LOGIN: Record<string, Partial<Record<Method, WebauthnOperation>>> = {
  '/auth/webauthn/login': {
    get: { tag: 'Authentication', summary: 'Options for a passkey sign-in', description: 'Request options naming no key: the browser offers the passkeys it holds for this site. An app without a session gets its token here (`meta.session_token`), to send with the answer.', responses: { 200: requestOptions } },
    post: { tag: 'Authentication', summary: 'Sign in with a passkey', description: 'The passkey names the account and, having verified the person, stands for both factors. 200, or 401 when the login waits at a step (`verify_email`); 400 `incorrect_code` for a bad answer, `account_inactive` for an inactive account. A signed-in client becomes whoever the passkey names, in a new session.', requestBody: 'WebAuthnCredential', limited: true, responses: { 200: authenticated, 400: error, 401: unauthenticated } },
  },
};

const PASSKEY_SIGNUP: Record<string, Partial<Record<Method, WebauthnOperation>>> = {
  '/auth/webauthn/signup': {
    post: { tag: 'Authentication', summary: 'Sign up with a passkey', description: 'The signup form without a password. 401 with `verify_email` pending, whether or not the address had an account (its owner is told by email); after the mailed code, `mfa_signup_webauthn` is pending. 403 when signup is closed; 409 when someone is signed in.', requestBody: 'PasskeySignup', limited: true, busy: true, responses: { 400: error, 401: unauthenticated, 403: ref('responses', 'Forbidden'), 409: conflict } },
    get: { tag: 'Authentication', summary: "Options for the new account's passkey", description: 'Creation options for a passkey; 409 unless `mfa_signup_webauthn` is pending.', responses: { 200: creationOptions, 409: conflict } },
    put: { tag: 'Authentication', summary: 'Finish the signup with its passkey', description: 'The browser\'s new passkey (and a name) signs the person in (200); 400 for a bad one (the signup still waits); 409 unless `mfa_signup_webauthn` is pending.', requestBody: 'AddWebAuthnAuthenticator', responses: { 200: authenticated, 400: error, 401: unauthenticated, 409: conflict } },
  },
};

/** The WebAuthn operations this server registers, by path (relative to /_allauth/{client}/v1). */
export function webauthnOperations(
  settings: Partial<Pick<Settings, 'MFA_SUPPORTED_TYPES' | 'MFA_PASSKEY_LOGIN_ENABLED' | 'MFA_PASSKEY_SIGNUP_ENABLED'>>,
): Record<string, Partial<Record<Method, WebauthnOperation>>> {
  if (!settings.MFA_SUPPORTED_TYPES?.includes('webauthn')) return {};
  return {
    ...SECURITY_KEYS,
    ...(settings.MFA_PASSKEY_LOGIN_ENABLED === true ? PASSKEY_LOGIN : {}),
    ...(settings.MFA_PASSKEY_SIGNUP_ENABLED === true ? PASSKEY_SIGNUP : {}),
  };
}

const credential: Json = {
  type: 'object',
  description: "The browser's answer, as JSON (@github/webauthn-json's, or PublicKeyCredential.toJSON()): `id`, `rawId`, `type`, `response`, `clientExtensionResults`.",
};

export const WEBAUTHN_SCHEMAS: Json = {
  WebAuthnCredential: credential,
  WebAuthnAuthenticator: object(
    {
      type: { type: 'string', enum: ['webauthn'] },
      id: { type: 'integer', description: 'The key\'s id, for renaming and removing it.' },
      name: { type: 'string', description: 'The name the person gave it.' },
      is_passwordless: { type: 'boolean', description: 'Whether it is a passkey, which signs in alone.' },
      created_at: schema('Timestamp'),
      last_used_at: { type: 'number', nullable: true, description: 'When it was last used (epoch seconds), null for never.' },
    },
    ['type', 'id', 'name', 'created_at', 'last_used_at'],
  ),
};

export const WEBAUTHN_PARAMETERS: Json = {
  Passwordless: { name: 'passwordless', in: 'query', required: false, allowEmptyValue: true, description: 'Present (whatever its value): the options are for a passkey.', schema: { type: 'boolean' } },
};

export const WEBAUTHN_REQUEST_BODIES: Json = {
  WebAuthnCredential: requestBody("The browser's answer to the options.", object({ credential: schema('WebAuthnCredential') })),
  AddWebAuthnAuthenticator: requestBody('The new credential, and a name for it (default: "Security key", or "Passkey" at signup).', object({ name: { type: 'string' }, credential: schema('WebAuthnCredential') }, ['credential'])),
  UpdateWebAuthn: requestBody('The key and its new name.', object({ id: { type: 'integer' }, name: { type: 'string' } })),
  DeleteWebAuthn: requestBody('The keys to remove.', object({ authenticators: { type: 'array', items: { type: 'integer' }, description: 'Their ids, as listed.' } })),
  PasskeySignup: requestBody('The new account: the address, and the username in projects that sign in by username.', object({ email: schema('Email'), username: schema('Username') }, ['email'])),
};

const optionsBody = (name: string, description: string): Json =>
  object({ status: status(200), data: object({ [name]: object({ publicKey: { type: 'object', description } }) }) }, ['status', 'data']);

export const WEBAUTHN_RESPONSES: Json = {
  WebAuthnRequestOptions: json('Request options, for `navigator.credentials.get()`.', optionsBody('request_options', 'PublicKeyCredentialRequestOptions as JSON (challenge, rpId, allowCredentials, userVerification, timeout).')),
  WebAuthnCreationOptions: json('Creation options, for `navigator.credentials.create()`.', optionsBody('creation_options', 'PublicKeyCredentialCreationOptions as JSON (challenge, rp, user, pubKeyCredParams, excludeCredentials, authenticatorSelection, timeout).')),
  WebAuthnAuthenticator: json('The security key.', object({ status: status(200), data: schema('WebAuthnAuthenticator') })),
  AddedWebAuthnAuthenticator: json('The new security key.', object({
    status: status(200),
    data: schema('WebAuthnAuthenticator'),
    meta: object({ recovery_codes_generated: { type: 'boolean', description: 'Whether recovery codes were made with it.' } }),
  })),
};
