import type { Settings } from '../../config/settings.js';
import { HEADLESS_COMPONENTS } from './openapi-components.js';
import { webauthnOperations } from './openapi-webauthn.js';

/**
 * Latchkey's own OpenAPI 3.0.3 description of the headless API it serves, written as data and
 * served at /_allauth/openapi.{json,yaml,html} when HEADLESS_SERVE_SPECIFICATION is on. It lists
 * only what Latchkey serves (a subset of allauth.headless's published contract, with the same
 * paths, field names and types) so that a generated client or a reader sees exactly this server.
 * A test keeps it honest: its operations are the routes the server registers, every $ref
 * resolves, and allauth's own examples of the shared shapes satisfy its schemas.
 */

type Json = Record<string, unknown>;
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'requestBodies', name: string): Json => ({ $ref: `#/components/${kind}/${name}` });

/** What an operation is about; the HTML page groups operations by it. */
const TAGS = [
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
type Tag = (typeof TAGS)[number]['name'];

interface OperationSpec {
  tag: Tag;
  summary: string;
  description: string;
  /** Extra parameters: the key headers of the verification and reset links. */
  parameters?: string[];
  requestBody?: string;
  responses: Record<string, Json>;
  /** Operations whose answer can be refused by a rate limit (429 with Retry-After). */
  limited?: boolean;
  /** Operations whose answer can be 503: mail could not be sent, or passwords are queued too deep. */
  busy?: boolean;
  /** A real form post (the provider redirect), not JSON: no 415. */
  form?: boolean;
}

const unauthenticated = ref('responses', 'Unauthenticated');
const authenticated = ref('responses', 'Authenticated');
const error = ref('responses', 'Error');
const orReauthentication = ref('responses', 'AuthenticationOrReauthentication');
const statusOk = ref('responses', 'StatusOK');

/** Every operation, by path (relative to /_allauth/{client}/v1) and method. */
const OPERATIONS: Record<string, Partial<Record<HttpMethod, OperationSpec>>> = {
  '/config': {
    get: { tag: 'Configuration', summary: 'Read the configuration', description: 'Which login methods, signup and second factors the server offers. The same for everybody: read it once when the front end starts.', responses: { 200: ref('responses', 'Configuration') } },
  },
  '/auth/session': {
    get: { tag: 'Authentication', summary: 'Who is signed in', description: 'The signed-in user and how they proved who they are, or 401 listing the flows that can sign someone in (with the pending one, if a login waits at a step).', responses: { 200: authenticated, 401: unauthenticated } },
    delete: { tag: 'Authentication', summary: 'Sign out', description: 'Ends the session, together with any login waiting for its next step. Always answers 401: nobody is signed in afterwards.', responses: { 401: unauthenticated } },
  },
  '/auth/login': {
    post: { tag: 'Authentication', summary: 'Sign in with a password', description: 'Username or email (as the configuration\'s `login_methods` allow) and password. 200 when signed in; 401 when the login waits at a step (`login_by_code`, `verify_email`, `mfa_authenticate`, `mfa_trust`), named in the pending flow; 409 when someone is already signed in.', requestBody: 'Login', limited: true, busy: true, responses: { 200: authenticated, 400: error, 401: unauthenticated, 409: ref('responses', 'Conflict') } },
  },
  '/auth/signup': {
    post: { tag: 'Authentication', summary: 'Create an account', description: 'When email verification is mandatory the answer is 401 with a pending `verify_email` flow, whether or not the address already had an account (its owner is told by email). Otherwise the new account is signed in, through the same steps as a login.', requestBody: 'Signup', limited: true, busy: true, responses: { 200: authenticated, 400: error, 401: unauthenticated, 403: ref('responses', 'Forbidden'), 409: ref('responses', 'Conflict') } },
  },
  '/auth/reauthenticate': {
    post: { tag: 'Authentication', summary: 'Confirm the password again', description: 'Sensitive changes need a recent proof of identity; they answer 401 with the `reauthenticate` flow when it is too old. This renews it with the password.', requestBody: 'Reauthenticate', limited: true, busy: true, responses: { 200: authenticated, 400: error, 401: unauthenticated } },
  },
  '/auth/email/verify': {
    get: { tag: 'Email verification', summary: 'Look up a verification key', description: 'Which address and account a mailed key confirms, without confirming it: link scanners may fetch a link, and must change nothing. `is_authenticating` says whether confirming it will continue this session\'s login. With verification by code (`email_verification_by_code_enabled`) the key is the mailed code, pending in this session only (409 when none is): the look uses one of its tries, and a wrong one is 400 `incorrect_code`.', parameters: ['EmailVerificationKey'], responses: { 200: ref('responses', 'EmailVerificationInfo'), 400: error, 409: ref('responses', 'Conflict') } },
    post: { tag: 'Email verification', summary: 'Confirm an address', description: 'Confirms the address the key names. A login of that account waiting in this session for the confirmation continues (200, or 401 at its next step); otherwise the answer is the session\'s state: 200 if someone is signed in, else 401. With verification by code the key is the mailed code, which works only in the session it was mailed for (the login waiting at `verify_email`, which a right code always continues, or the signed-in user\'s session for an added address), once, for a few minutes and a few tries: 400 `incorrect_code` for a wrong one; a code expired or out of tries ends the waiting login (401) or is dropped (409); 409 when no code is pending.', requestBody: 'VerifyEmail', responses: { 200: authenticated, 400: error, 401: unauthenticated, 409: ref('responses', 'Conflict') } },
  },
  '/auth/email/verify/resend': {
    post: { tag: 'Email verification', summary: 'Send the verification mail again', description: 'For a login waiting for its address to be confirmed, or with verification by code for the code pending in this session (a new code replaces it); 409 when none is.', limited: true, busy: true, responses: { 200: statusOk, 409: ref('responses', 'Conflict') } },
  },
  '/auth/password/request': {
    post: { tag: 'Password reset', summary: 'Ask for a reset link', description: 'Mails a reset link to every active account the address reaches. The answer is the same whether or not there is one, and it does not wait for the mail.', requestBody: 'RequestPassword', limited: true, responses: { 200: statusOk, 400: error } },
  },
  '/auth/password/reset': {
    get: { tag: 'Password reset', summary: 'Look up a reset key', description: 'Whose password the mailed key resets, without using it.', parameters: ['PasswordResetKey'], responses: { 200: ref('responses', 'PasswordResetInfo'), 400: error } },
    post: { tag: 'Password reset', summary: 'Set a new password with a reset key', description: 'Sets the password and ends every session of the account. Nobody is signed in (401): the person signs in with the new password, and passes their second factor if they have one.', requestBody: 'ResetPassword', limited: true, busy: true, responses: { 400: error, 401: unauthenticated } },
  },
  '/auth/2fa/authenticate': {
    post: { tag: 'Two-factor authentication', summary: "Give the login's code", description: 'A code from the authenticator app or a recovery code, for a login waiting at `mfa_authenticate`. With "trust this browser" on (browser client), the login then waits at `mfa_trust`.', requestBody: 'Code', limited: true, responses: { 200: authenticated, 400: error, 401: unauthenticated } },
  },
  '/auth/2fa/reauthenticate': {
    post: { tag: 'Two-factor authentication', summary: 'Confirm identity with a code', description: 'Renews the proof of identity with a code instead of the password (the `mfa_reauthenticate` flow).', requestBody: 'Code', limited: true, responses: { 200: authenticated, 400: error, 401: orReauthentication } },
  },
  '/auth/sessions': {
    get: { tag: 'Sessions', summary: 'List sessions', description: "The signed-in user's live sessions, the current one marked.", responses: { 200: ref('responses', 'Sessions'), 401: unauthenticated } },
    delete: { tag: 'Sessions', summary: 'End sessions', description: 'Ends the listed sessions of the signed-in user (ids of anyone else\'s match nothing). Ending the current one signs out (401).', requestBody: 'EndSessions', responses: { 200: ref('responses', 'Sessions'), 400: error, 401: unauthenticated } },
  },
  '/account/password/change': {
    post: { tag: 'Account: password', summary: 'Change the password', description: 'The current password and the new one; an account without a usable password sets one without. Every other session ends, and this one continues under a new id (an app gets its new token in `meta.session_token`).', requestBody: 'ChangePassword', limited: true, busy: true, responses: { 200: authenticated, 400: error, 401: unauthenticated } },
  },
  '/account/email': {
    get: { tag: 'Account: email', summary: 'List addresses', description: "The signed-in user's email addresses.", responses: { 200: ref('responses', 'EmailAddresses'), 401: unauthenticated } },
    post: { tag: 'Account: email', summary: 'Add an address', description: 'Adds the address, unverified, and mails it a confirmation link. The list looks the same whether or not another account holds the address.', requestBody: 'Email', limited: true, responses: { 200: ref('responses', 'EmailAddresses'), 400: error, 401: orReauthentication } },
    put: { tag: 'Account: email', summary: 'Send the confirmation link again', description: 'For one of the user\'s unverified addresses.', requestBody: 'Email', limited: true, busy: true, responses: { 200: statusOk, 400: error, 401: unauthenticated } },
    patch: { tag: 'Account: email', summary: 'Make an address primary', description: 'Only a verified address can be primary.', requestBody: 'MarkPrimaryEmail', limited: true, responses: { 200: ref('responses', 'EmailAddresses'), 400: error, 401: orReauthentication } },
    delete: { tag: 'Account: email', summary: 'Remove an address', description: 'The primary address cannot be removed while others remain.', requestBody: 'Email', limited: true, responses: { 200: ref('responses', 'EmailAddresses'), 400: error, 401: orReauthentication } },
  },
  '/auth/provider/token': {
    post: { tag: 'Providers', summary: 'Sign in with an ID token', description: 'An ID token the client got from the provider itself (a mobile app\'s own sign-in), checked against the app its `client_id` names: signature, issuer, audience, expiry, and `azp` when present. Then as any sign-in: 200, or 401 with the pending step (`mfa_authenticate`, `verify_email`) or the `provider_signup` form; 403 when signup is closed to a new person. `process: connect` adds the provider account to the signed-in user (after a recent proof of identity).', requestBody: 'ProviderToken', responses: { 200: authenticated, 400: error, 401: orReauthentication, 403: ref('responses', 'Forbidden') } },
  },
  '/auth/provider/signup': {
    get: { tag: 'Providers', summary: "Read the provider's signup form", description: 'What the provider gave, for a signup it could not finish alone (its address has an account here, it gave none, or SOCIALACCOUNT_AUTO_SIGNUP is off); 409 when none waits.', responses: { 200: ref('responses', 'ProviderSignup'), 409: ref('responses', 'Conflict') } },
    post: { tag: 'Providers', summary: "Complete the provider's signup", description: 'The address (and username) for the new account; then as any signup: 200, or 401 at `verify_email`. An address that has an account here is refused: sign in to it, then connect the provider.', requestBody: 'ProviderSignup', limited: true, responses: { 200: authenticated, 400: error, 401: unauthenticated, 403: ref('responses', 'Forbidden'), 409: ref('responses', 'Conflict') } },
  },
  '/account/providers': {
    get: { tag: 'Account: providers', summary: 'List provider accounts', description: "The signed-in user's accounts at providers, oldest first.", responses: { 200: ref('responses', 'ProviderAccounts'), 401: unauthenticated } },
    delete: { tag: 'Account: providers', summary: 'Disconnect a provider account', description: 'By provider and uid; needs a recent proof of identity. Refused when it is the last way to sign in: `no_password`, or under mandatory verification `no_verified_email`; `account_not_found` for an account that is not the user\'s.', requestBody: 'ProviderAccount', responses: { 200: ref('responses', 'ProviderAccounts'), 400: error, 401: orReauthentication } },
  },
  '/account/authenticators': {
    get: { tag: 'Account: two-factor', summary: 'List second factors', description: 'The authenticator app and the recovery codes, when set up, and each security key.', responses: { 200: ref('responses', 'Authenticators'), 401: unauthenticated } },
  },
  '/account/authenticators/totp': {
    get: { tag: 'Account: two-factor', summary: 'Authenticator app status', description: 'The app when one is set up; else 404 with a new secret and its `otpauth:` URL in `meta`, the same until it is activated. 409 when the account may not add one (no verified address).', responses: { 200: ref('responses', 'TotpAuthenticator'), 401: unauthenticated, 404: ref('responses', 'TotpNotSetUp'), 409: ref('responses', 'Conflict') } },
    post: { tag: 'Account: two-factor', summary: 'Activate the authenticator app', description: 'A code from the app proves it holds the secret. Recovery codes are made with the first second factor (`meta.recovery_codes_generated`).', requestBody: 'Code', limited: true, responses: { 200: ref('responses', 'TotpAuthenticator'), 400: error, 401: orReauthentication, 409: ref('responses', 'Conflict') } },
    delete: { tag: 'Account: two-factor', summary: 'Deactivate the authenticator app', description: 'Needs a recent proof of identity.', responses: { 200: statusOk, 401: orReauthentication, 404: ref('responses', 'NotFound') } },
  },
  '/account/authenticators/recovery-codes': {
    get: { tag: 'Account: two-factor', summary: 'Show recovery codes', description: 'The unused codes. Needs a recent proof of identity.', responses: { 200: ref('responses', 'RecoveryCodes'), 401: orReauthentication, 404: ref('responses', 'NotFound') } },
    post: { tag: 'Account: two-factor', summary: 'Make new recovery codes', description: 'Replaces every code with a new set; the old ones stop working.', responses: { 200: ref('responses', 'RecoveryCodes'), 400: error, 401: orReauthentication } },
  },
};

/** Operations of one client only: "trust this browser" is a cookie, which only browsers keep. */
/** Login by a mailed code: served only where the project turns it on (ACCOUNT_LOGIN_BY_CODE_ENABLED). */
const LOGIN_CODE_REQUEST_OPERATIONS: Record<string, Partial<Record<HttpMethod, OperationSpec>>> = {
  '/auth/code/request': {
    post: { tag: 'Authentication', summary: 'Ask for a sign-in code', description: 'Mails a short code to the account the address names, and keeps the login in this session: 401 with `login_by_code` pending, the same answer whether or not there is an account, without waiting for the mail.', requestBody: 'RequestLoginCode', limited: true, responses: { 400: error, 401: unauthenticated } },
  },
};

/** The mailed code's answer: for a login by code, and for the code ACCOUNT_LOGIN_BY_CODE_REQUIRED asks for after the password or provider. */
const LOGIN_CODE_CONFIRM_OPERATIONS: Record<string, Partial<Record<HttpMethod, OperationSpec>>> = {
  '/auth/code/confirm': {
    post: { tag: 'Authentication', summary: 'Sign in with the mailed code', description: 'The code works only in the session that asked for it (or whose login, waiting at `login_by_code`, had it mailed), once, for a few minutes and a few tries. 200 when signed in; 401 when the login waits at a further step (`verify_email`, `mfa_authenticate`), or when the code of a waiting login has expired or been used up (the login is over: sign in again); 400 for a wrong code; 409 when no code is pending.', requestBody: 'ConfirmLoginCode', responses: { 200: authenticated, 400: error, 401: unauthenticated, 409: ref('responses', 'Conflict') } },
  },
};

const BROWSER_OPERATIONS: Record<string, Partial<Record<HttpMethod, OperationSpec>>> = {
  '/auth/provider/redirect': {
    post: { tag: 'Providers', summary: 'Sign in through the provider', description: 'A real form post (the answer is a redirect, which an XHR cannot follow) that sends the browser to the provider. Its callback sends it back to `callback_url`, with `error` and `error_process` in the query on failure (`cancelled`, `signup_closed`, `permission_denied`, `reauthentication_required`, `connected_other`, `unknown`); the front end then reads `auth/session` to see where the sign-in stands. A `callback_url` that is neither a path here nor at an allowed origin is refused (400, or HEADLESS_FRONTEND_URLS.socialaccount_login_error).', requestBody: 'ProviderRedirect', form: true, responses: { 302: ref('responses', 'ToProvider'), 400: error } },
  },
  '/auth/2fa/trust': {
    post: { tag: 'Two-factor authentication', summary: 'Trust this browser', description: 'Answers the `mfa_trust` step that follows the code when MFA_TRUST_ENABLED is on: `true` sets a cookie that lets later logins of this user in this browser skip the code (never the password). Either answer completes the login.', requestBody: 'Trust', responses: { 200: authenticated, 400: error, 401: unauthenticated } },
  },
};

const UNSAFE: readonly HttpMethod[] = ['post', 'put', 'patch', 'delete'];

function operation(path: string, method: HttpMethod, spec: OperationSpec, client: 'any' | 'browser'): Json {
  const responses: Json = { ...spec.responses };
  if (UNSAFE.includes(method)) {
    // A failed CSRF check (browser client) answers 403, as does a closed signup.
    responses[403] ??= ref('responses', 'Forbidden');
    if (!spec.form) responses[415] = ref('responses', 'UnsupportedMediaType');
  }
  if (path !== '/config' && client === 'any') responses[410] = ref('responses', 'SessionGone');
  if (spec.limited) responses[429] = ref('responses', 'TooManyRequests');
  if (spec.busy) responses[503] = ref('responses', 'Unavailable');
  const parameters = [...(client === 'any' ? [ref('parameters', 'Client')] : []), ...(spec.parameters ?? []).map((name) => ref('parameters', name))];
  if (client === 'any' && path !== '/config') parameters.push(ref('parameters', 'SessionToken'));
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    operationId: `${method}${path.replace(/[^a-z0-9]+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase())}`,
    parameters,
    ...(spec.requestBody === undefined ? {} : { requestBody: ref('requestBodies', spec.requestBody) }),
    responses,
  };
}

function pathsOf(operations: typeof OPERATIONS, prefix: string, client: 'any' | 'browser'): Json {
  return Object.fromEntries(
    Object.entries(operations).map(([path, methods]) => [
      `${prefix}${path}`,
      Object.fromEntries(Object.entries(methods).map(([method, spec]) => [method, operation(path, method as HttpMethod, spec, client)])),
    ]),
  );
}

const DESCRIPTION = `The JSON API for single-page and mobile apps, at \`/_allauth/{client}/v1/\`. It follows the published contract of allauth.headless, so clients written for it work here unchanged; this document lists what this server offers.

**Two clients.** \`browser\`: the session travels in the session cookie, and every state-changing request carries the \`csrftoken\` cookie's value in the \`X-CSRFToken\` header (without it: 403). \`app\`: no cookies; the session token from \`meta.session_token\` goes in the \`X-Session-Token\` header. When the token names no live session the answer is 410: drop it and start again.

**Envelope.** Every answer is JSON with the HTTP status repeated in \`status\`, and \`data\`, \`meta\` or \`errors\` (\`[{message, code, param}]\`). 401 lists the \`flows\` that can sign someone in, the one a login waits at marked \`is_pending\`; 401 for a signed-in user means a fresh proof of identity is needed first. Too many attempts answer 429 with \`Retry-After\`. Request bodies are JSON only (else 415), but for the provider redirect, a real form post. Nothing is cached (\`Cache-Control: no-store\`).`;

/**
 * The operation that answers a login stage of the project's own (login-stage.ts), and the stage ids
 * added to the flows' ids: in the document only where the project has such a stage.
 */
function customStageParts(stageIds: readonly string[]): { paths: Json; components: Json } {
  if (stageIds.length === 0) return { paths: {}, components: HEADLESS_COMPONENTS };
  const answer = operation('/auth/stage/{id}', 'post', {
    tag: 'Authentication',
    summary: "Answer a login step of this site's own",
    description: `For a login waiting at one of this site's own steps (${stageIds.map((id) => `\`${id}\``).join(', ')}), named in the pending flow: the JSON body is what the step asks for. 200 when signed in, 401 at the next step (or when no login waits at this one); 400 when the step refuses the answer.`,
    requestBody: 'StageAnswer',
    responses: { 200: ref('responses', 'Authenticated'), 400: ref('responses', 'Error'), 401: ref('responses', 'Unauthenticated') },
  }, 'any');
  const idParameter = { name: 'id', in: 'path', required: true, description: "The step's id, as its flow names it.", schema: { type: 'string', enum: [...stageIds] } };
  answer.parameters = [...(answer.parameters as unknown[]), idParameter];
  const schemas = HEADLESS_COMPONENTS.schemas as Record<string, Json>;
  const flow = schemas.Flow as { properties: { id: Json & { enum: string[] } } };
  const components = {
    ...HEADLESS_COMPONENTS,
    schemas: { ...schemas, Flow: { ...flow, properties: { ...flow.properties, id: { ...flow.properties.id, enum: [...flow.properties.id.enum, ...stageIds] } } } },
    requestBodies: {
      ...(HEADLESS_COMPONENTS.requestBodies as Json),
      StageAnswer: { required: true, content: { 'application/json': { schema: { type: 'object', description: 'The fields the step asks for; the site documents them.', additionalProperties: true } } } },
    },
  };
  return { paths: { '/_allauth/{client}/v1/auth/stage/{id}': { post: answer } }, components };
}

/** The whole document, for this site (its name and address, and the ids of its own login stages). */
export function headlessOpenApiDocument(
  settings: Pick<Settings, 'SITE_NAME' | 'SITE_URL'> &
    Partial<Pick<Settings, 'ACCOUNT_LOGIN_BY_CODE_ENABLED' | 'ACCOUNT_LOGIN_BY_CODE_REQUIRED' | 'MFA_SUPPORTED_TYPES' | 'MFA_PASSKEY_LOGIN_ENABLED' | 'MFA_PASSKEY_SIGNUP_ENABLED' | 'URL_PREFIX'>>,
  customStageIds: readonly string[] = [],
): Json {
  const custom = customStageParts(customStageIds);
  const byCode = settings.ACCOUNT_LOGIN_BY_CODE_ENABLED === true;
  const codeRequired = settings.ACCOUNT_LOGIN_BY_CODE_REQUIRED !== undefined && settings.ACCOUNT_LOGIN_BY_CODE_REQUIRED !== false;
  const operations = {
    ...OPERATIONS,
    ...(byCode ? LOGIN_CODE_REQUEST_OPERATIONS : {}),
    ...(byCode || codeRequired ? LOGIN_CODE_CONFIRM_OPERATIONS : {}),
    ...webauthnOperations(settings),
  };
  return {
    openapi: '3.0.3',
    info: { title: `${settings.SITE_NAME}: headless API`, version: '1', description: DESCRIPTION },
    // The site's origin and where Latchkey is mounted (URL_PREFIX): the paths below are relative to it.
    servers: [{ url: `${new URL('/', settings.SITE_URL).toString().replace(/\/$/, '')}${settings.URL_PREFIX ?? ''}` }],
    tags: TAGS,
    paths: { ...pathsOf(operations, '/_allauth/{client}/v1', 'any'), ...custom.paths, ...pathsOf(BROWSER_OPERATIONS, '/_allauth/browser/v1', 'browser') },
    components: custom.components,
  };
}
