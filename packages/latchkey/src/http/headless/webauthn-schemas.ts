import { json, object, requestBody, schema, status } from './json-schema.js';

/**
 * The shapes of the WebAuthn routes (passkeys and security keys, webauthn-*.ts and
 * passkey-signup.ts), as allauth.headless has them: the options as `{publicKey: ...}`, the
 * browser's answer as `credential`. The named ones go into the document's components; the
 * parameters, bodies and answers are used by the routes' own schemas.
 */

type Json = Record<string, unknown>;

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

export const WEBAUTHN_PARAMETERS = {
  Passwordless: { name: 'passwordless', in: 'query', required: false, allowEmptyValue: true, description: 'Present (whatever its value): the options are for a passkey.', schema: { type: 'string' } },
};

export const WEBAUTHN_REQUEST_BODIES = {
  WebAuthnCredential: requestBody("The browser's answer to the options.", object({ credential: schema('WebAuthnCredential') })),
  AddWebAuthnAuthenticator: requestBody('The new credential, and a name for it (default: "Security key", or "Passkey" at signup).', object({ name: { type: 'string' }, credential: schema('WebAuthnCredential') }, ['credential'])),
  UpdateWebAuthn: requestBody('The key and its new name.', object({ id: { type: 'integer' }, name: { type: 'string' } })),
  DeleteWebAuthn: requestBody('The keys to remove.', object({ authenticators: { type: 'array', items: { type: 'integer' }, description: 'Their ids, as listed.' } })),
  PasskeySignup: requestBody(
    'The new account: the address, the username in projects that sign in by username, and the name where ACCOUNT_SIGNUP_FIELDS lists it.',
    object({ email: schema('Email'), username: schema('Username'), name: { type: 'string', description: 'The display name, read where ACCOUNT_SIGNUP_FIELDS lists name.' } }, ['email']),
  ),
};

const optionsBody = (name: string, description: string): Json =>
  object({ status: status(200), data: object({ [name]: object({ publicKey: { type: 'object', additionalProperties: true, description } }) }) }, ['status', 'data']);

export const WEBAUTHN_RESPONSES = {
  WebAuthnRequestOptions: json('Request options, for `navigator.credentials.get()`.', optionsBody('request_options', 'PublicKeyCredentialRequestOptions as JSON (challenge, rpId, allowCredentials, userVerification, timeout).')),
  WebAuthnCreationOptions: json('Creation options, for `navigator.credentials.create()`.', optionsBody('creation_options', 'PublicKeyCredentialCreationOptions as JSON (challenge, rp, user, pubKeyCredParams, excludeCredentials, authenticatorSelection, timeout).')),
  WebAuthnAuthenticator: json('The security key.', object({ status: status(200), data: schema('WebAuthnAuthenticator') })),
  AddedWebAuthnAuthenticator: json('The new security key.', object({
    status: status(200),
    data: schema('WebAuthnAuthenticator'),
    meta: object({ recovery_codes_generated: { type: 'boolean', description: 'Whether recovery codes were made with it.' } }),
  })),
};
