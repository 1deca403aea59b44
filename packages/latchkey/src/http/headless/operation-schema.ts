import { msgid } from '../../core/i18n/message.js';
import type { FastifySchema } from 'fastify';
import { INVALID_CONFIRMATION_KEY } from '../../account/email-confirmation.js';
import { INVALID_RESET_KEY } from '../../account/flows/password-reset.js';
import { PROVIDER_TOKEN_MESSAGES } from '../../socialaccount/flows/provider-token.js';
import { REFUSAL_KEYWORD, type DeclaredRefusal } from '../kit/declared-input.js';
import { arrayOf, json, object, requestBody, schema, status } from './json-schema.js';
import { WEBAUTHN_PARAMETERS, WEBAUTHN_REQUEST_BODIES, WEBAUTHN_RESPONSES } from './webauthn-schemas.js';

/**
 * What a headless route declares about itself, in its Fastify `schema`: its tag, summary and
 * description, the headers and query it reads, its body and its answers by status. The OpenAPI
 * document (specification.ts, through @fastify/swagger) is made from these declarations, so a
 * route is described where it is registered. The bodies and answers here are shared by the
 * routes; their shapes are the named ones of schemas.ts.
 *
 * The bodies are also checked against their declarations (kit/declared-input.ts): a missing field
 * or one of the wrong type is refused in allauth's envelope (`{status: 400, errors: [{message,
 * code, param}]}`) before the flow runs, with the refusal the field declares where allauth answers
 * it in words of its own (REFUSALS). What a field's value means is the flow's to check.
 */

type Json = Record<string, unknown>;
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What an operation is about, in the order the docs list them. */
export const TAGS = [
  { name: 'Configuration', description: 'What the server offers, for a front end to draw its forms.' },
  { name: 'Authentication', description: 'Signing in and out, signing up, and proving identity again before a sensitive change.' },
  { name: 'Email verification', description: 'Confirming an email address with the key from a mailed link, or the mailed code.' },
  { name: 'Password reset', description: 'Setting a new password with the key from a mailed link.' },
  { name: 'Two-factor authentication', description: "The login's code or security key step, reauthentication with a code or a key, and trusting a browser." },
  { name: 'Providers', description: 'Signing in with an identity provider: through a redirect, with an ID token, and the signup form a provider\'s answer may need.' },
  { name: 'Sessions', description: "The signed-in user's sessions on every device." },
  { name: 'Account: password', description: 'Changing (or setting) the password of the signed-in user.' },
  { name: 'Account: email', description: 'The email addresses of the signed-in user.' },
  { name: 'Account: two-factor', description: 'Authenticator apps (TOTP), recovery codes, security keys and passkeys of the signed-in user.' },
  { name: 'Account: providers', description: "The signed-in user's accounts at identity providers." },
] as const;
export type Tag = (typeof TAGS)[number]['name'];

/** A refusal in the envelope: the status and, usually, what went wrong. */
const refusal = (code: number): Json => object({ status: status(code), errors: schema('Errors') }, ['status']);

/** Headers and query parameters some routes read. */
const PARAMETERS = {
  EmailVerificationKey: { name: 'X-Email-Verification-Key', in: 'header', required: true, description: 'The key from the confirmation link.', schema: { type: 'string' } },
  PasswordResetKey: { name: 'X-Password-Reset-Key', in: 'header', required: true, description: 'The key from the reset link.', schema: { type: 'string' } },
  ...WEBAUTHN_PARAMETERS,
} as const;

/** The app client's session token: every route of both clients but config reads it (specification.ts adds it). */
export const SESSION_TOKEN_PARAMETER = { type: 'string', description: 'App client: the session token from `meta.session_token`. Browsers send none.' };
export const CLIENT_PARAMETER = { type: 'string', enum: ['browser', 'app'], description: '`browser` (session cookie and CSRF header) or `app` (session token header).' };

/**
 * What allauth answers, for some fields, when they are missing or not of their type: the handlers
 * give the same refusal when the value is there but will not do.
 */
export const REFUSALS = {
  confirmationKey: { message: INVALID_CONFIRMATION_KEY, code: 'invalid' },
  resetKey: { message: INVALID_RESET_KEY, code: 'token_invalid' },
  // A list or a number is no address to send a link to: allauth reads it as none given.
  addressToMail: { message: msgid('This field is required.'), code: 'required' },
  addressToAdd: { message: msgid('Enter a valid email address.'), code: 'invalid' },
  onlyPrimary: { message: msgid('Only "primary": true is accepted.'), code: 'invalid' },
  trust: { message: msgid('Answer true or false.'), code: 'invalid' },
  sessionIds: { message: msgid('Give the ids of the sessions to end, as a list of integers.'), code: 'invalid' },
  providerToken: { message: PROVIDER_TOKEN_MESSAGES.invalid_token, code: 'invalid_token' },
  clientId: { message: PROVIDER_TOKEN_MESSAGES.client_id_required, code: 'client_id_required' },
} as const satisfies Record<string, DeclaredRefusal>;

/** A field's schema with the refusal it declares. */
const refusedAs = (refusal: DeclaredRefusal, field: Json): Json => ({ ...field, [REFUSAL_KEYWORD]: refusal });

const REQUEST_BODIES = {
  Login: requestBody('Credentials.', schema('Login')),
  Signup: requestBody('The new account.', schema('Signup')),
  Reauthenticate: requestBody('The password.', object({ password: schema('Password') })),
  VerifyEmail: requestBody('The key from the confirmation link.', object({ key: refusedAs(REFUSALS.confirmationKey, { type: 'string' }) })),
  RequestPassword: requestBody('The address to send the link to.', object({ email: refusedAs(REFUSALS.addressToMail, schema('Email')) })),
  RequestLoginCode: requestBody('The address to mail a sign-in code to.', object({ email: schema('Email') })),
  ConfirmLoginCode: requestBody('The mailed sign-in code.', object({ code: { type: 'string' } })),
  ResetPassword: requestBody('The key from the reset link and the new password.', object({ key: refusedAs(REFUSALS.resetKey, { type: 'string' }), password: schema('Password') })),
  Code: requestBody('A code.', object({ code: schema('AuthenticatorCode') })),
  Trust: requestBody('Whether to trust this browser.', object({ trust: refusedAs(REFUSALS.trust, { type: 'boolean' }) })),
  EndSessions: requestBody('The sessions to end.', object({ sessions: refusedAs(REFUSALS.sessionIds, arrayOf({ type: 'integer' }, 'Session ids, as listed.')) })),
  ChangePassword: requestBody(
    'The current password (unless the account has none) and the new one.',
    object({ current_password: schema('Password'), new_password: schema('Password') }, ['new_password']),
  ),
  Email: requestBody('An address of the user.', object({ email: refusedAs(REFUSALS.addressToAdd, schema('Email')) })),
  ProviderToken: requestBody(
    'The provider and the token the client got from it.',
    object(
      {
        provider: schema('ProviderID'),
        process: { type: 'string', enum: ['login', 'connect'], description: '`login` (the default) signs in or up; `connect` adds the provider account to the signed-in user.' },
        token: refusedAs(REFUSALS.providerToken, object(
          {
            client_id: refusedAs(REFUSALS.clientId, { type: 'string', description: 'The client id the token was issued to: it names the app.' }),
            id_token: { type: 'string', description: 'The ID token (required: it is what is verified).' },
            access_token: { type: 'string', description: 'The access token, kept with SOCIALACCOUNT_STORE_TOKENS.' },
          },
          ['client_id'],
        )),
      },
      ['provider', 'token'],
    ),
  ),
  ProviderSignup: requestBody('The signup form: the address, and the username in projects that sign in by username.', object({ email: schema('Email'), username: schema('Username') }, ['email'])),
  ProviderAccount: requestBody('The provider account to disconnect.', object({ provider: schema('ProviderID'), account: schema('ProviderAccountID') })),
  ProviderRedirect: requestBody(
    'A real form post (not XHR), with the CSRF token in `csrfmiddlewaretoken`.',
    object(
      {
        provider: schema('ProviderID'),
        callback_url: { type: 'string', description: "The front end's page to return to: a path on this site, or a URL at an origin of CORS_ALLOWED_ORIGINS." },
        process: { type: 'string', enum: ['login', 'connect'], description: '`connect` adds the provider account to the signed-in user.' },
        csrfmiddlewaretoken: { type: 'string', description: 'The `csrftoken` cookie\'s value.' },
      },
      ['provider', 'callback_url', 'csrfmiddlewaretoken'],
    ),
  ),
  MarkPrimaryEmail: requestBody('The address to make primary.', object({ email: refusedAs(REFUSALS.addressToAdd, schema('Email')), primary: refusedAs(REFUSALS.onlyPrimary, { type: 'boolean', enum: [true] }) })),
};


const RESPONSES = {
  Configuration: json('The configuration.', schema('ConfigurationResponse')),
  Authenticated: json('Signed in: the user and how they proved who they are.', schema('AuthenticatedResponse')),
  Unauthenticated: json('Nobody is signed in: the flows that can change that, the pending one marked.', schema('AuthenticationResponse')),
  AuthenticationOrReauthentication: json('Nobody is signed in (`is_authenticated` false), or the signed-in user must prove who they are again first (`is_authenticated` true).', {
    oneOf: [schema('AuthenticationResponse'), schema('ReauthenticationResponse')],
  }),
  SessionGone: json('App client: the session token names no live session. Drop it and start again.', schema('SessionGoneResponse')),
  Error: json('The input was refused.', schema('ErrorResponse')),
  Forbidden: json('Refused: a failed CSRF check (browser client), or signup is closed.', refusal(403)),
  Conflict: json('Not possible in this state: someone is already signed in, no such step is pending, or the account may not add this factor.', refusal(409)),
  NotFound: json('Nothing to show or change.', refusal(404)),
  UnsupportedMediaType: json('The body was not JSON.', refusal(415)),
  TooManyRequests: json('Too many attempts; try again after the number of seconds in `Retry-After`.', refusal(429), {
    headers: { 'Retry-After': { type: 'integer', description: 'Seconds to wait.' } },
  }),
  Unavailable: json('Try again later: the mail could not be sent, or the server is busy checking other passwords.', refusal(503)),
  StatusOK: json('Done.', object({ status: status(200) })),
  ToProvider: {
    // No body: a redirect.
    type: 'null',
    description: "To the provider's sign-in; on failure, to `callback_url` with `error` and `error_process` (login or connect) in its query.",
    headers: { Location: { type: 'string', description: 'Where the browser goes.' } },
  },
  ProviderSignup: json('The signup waiting for its form: what the provider gave.', object({
    status: status(200),
    data: object({ email: arrayOf(schema('EmailAddress')), account: schema('ProviderAccount'), user: schema('PendingUser') }),
  })),
  ProviderAccounts: json("The user's provider accounts.", object({ status: status(200), data: arrayOf(schema('ProviderAccount')) })),
  EmailVerificationInfo: json('What the key confirms.', object({
    status: status(200),
    data: object({ email: schema('Email'), user: schema('User') }),
    meta: object({ is_authenticating: { type: 'boolean', description: "Whether confirming continues this session's login." } }),
  })),
  PasswordResetInfo: json('Whose password the key resets.', object({ status: status(200), data: object({ user: schema('User') }) })),
  Sessions: json("The user's live sessions.", object({ status: status(200), data: arrayOf(schema('Session')) })),
  EmailAddresses: json("The user's addresses.", object({ status: status(200), data: arrayOf(schema('EmailAddress')) })),
  Authenticators: json("The user's second factors: the authenticator app, the recovery codes, each security key.", object({ status: status(200), data: arrayOf(schema('Authenticator')) })),
  TotpAuthenticator: json('The authenticator app.', object({
    status: status(200),
    data: schema('TotpAuthenticator'),
    meta: object({ recovery_codes_generated: { type: 'boolean', description: 'Whether recovery codes were made with it.' } }),
  }, ['status', 'data'])),
  TotpNotSetUp: json('No authenticator app yet: a secret to set one up with.', object({
    status: status(404),
    meta: object({
      secret: { type: 'string', description: 'The secret, base32, for typing into the app.' },
      totp_url: { type: 'string', description: 'The same as an `otpauth://` URL, for a QR code.' },
    }),
  })),
  RecoveryCodes: json('The recovery codes.', object({ status: status(200), data: schema('RecoveryCodesWithCodes') })),
};


/** The bodies routes take, by name. */
export const bodies = { ...REQUEST_BODIES, ...WEBAUTHN_REQUEST_BODIES };
/** The answers routes give, by name. */
export const answers = { ...RESPONSES, ...WEBAUTHN_RESPONSES };

export interface OperationSpec {
  tag: Tag;
  summary: string;
  description: string;
  /** Headers or query parameters it reads: the keys of the mailed links, `?passwordless`. */
  parameters?: (keyof typeof PARAMETERS)[];
  body?: Json;
  responses: Record<number, Json>;
  /** It can be refused by a rate limit (429 with Retry-After). */
  limited?: boolean;
  /** It can answer 503: mail could not be sent, or passwords are queued too deep. */
  busy?: boolean;
  /** A real form post (the provider redirect), not JSON: no 415. */
  form?: boolean;
}

const UNSAFE: readonly HttpMethod[] = ['post', 'put', 'patch', 'delete'];

function parametersIn(where: 'header' | 'query', names: readonly (keyof typeof PARAMETERS)[]): Json | undefined {
  const chosen = names.map((name) => PARAMETERS[name] as Json & { name: string; in: string; required: boolean; description: string; schema: Json }).filter((parameter) => parameter.in === where);
  if (chosen.length === 0) return undefined;
  return object(
    Object.fromEntries(chosen.map((parameter) => [parameter.name, { ...parameter.schema, description: parameter.description }])),
    chosen.filter((parameter) => parameter.required).map((parameter) => parameter.name),
  );
}

/**
 * A headless route's `schema`: what it declares, with the answers every route of its kind can
 * give: 403 (a failed CSRF check) and 415 (a body that is not JSON) for a change, 429 and 503
 * where they apply. specification.ts adds the client and its session token.
 */
export function headlessOperation(method: HttpMethod, spec: OperationSpec): FastifySchema {
  const response: Record<number, Json> = { ...spec.responses };
  if (UNSAFE.includes(method)) {
    response[403] ??= answers.Forbidden;
    if (!spec.form) response[415] = answers.UnsupportedMediaType;
  }
  if (spec.limited) response[429] = answers.TooManyRequests;
  if (spec.busy) response[503] = answers.Unavailable;
  const headers = parametersIn('header', spec.parameters ?? []);
  const querystring = parametersIn('query', spec.parameters ?? []);
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    ...(headers === undefined ? {} : { headers }),
    ...(querystring === undefined ? {} : { querystring }),
    ...(spec.body === undefined ? {} : { body: spec.body }),
    ...(spec.form ? { consumes: ['application/x-www-form-urlencoded'] } : {}),
    response,
  };
}
