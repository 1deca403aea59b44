import { arrayOf, carryingSessionToken, object, schema, status } from './json-schema.js';
import { userFieldJsonSchema, type UserField } from '../../core/user-fields.js';
import { WEBAUTHN_SCHEMAS } from './webauthn-schemas.js';

/**
 * The named shapes of the headless API (allauth.headless's: field names and types unchanged, so
 * that its clients read them; the descriptions are Latchkey's own), added to the headless scope
 * with `addSchema` and referenced from the routes' schemas as `{ $ref: 'User#' }`. The OpenAPI
 * document lists them under components.schemas by the same names.
 */

type Json = Record<string, unknown>;

const FLOW_IDS = ['login', 'login_by_code', 'signup', 'verify_email', 'mfa_authenticate', 'mfa_trust', 'mfa_login_webauthn', 'mfa_signup_webauthn', 'reauthenticate', 'mfa_reauthenticate', 'provider_redirect', 'provider_token', 'provider_signup'];

/** The display name a signup may ask (ACCOUNT_SIGNUP_FIELDS' `name`, `name*` when required). */
const SIGNUP_NAME = { type: 'string', description: 'The display name, read where ACCOUNT_SIGNUP_FIELDS lists name.' };

const SCHEMAS: Json = {
  Timestamp: { type: 'number', description: 'A moment, in seconds since the Unix epoch (with a fraction).', example: 1767225600.25 },
  Email: { type: 'string', description: 'An email address.', example: 'ada@example.com' },
  Username: { type: 'string', description: 'A username (projects that sign in by username).', example: 'ada' },
  Password: { type: 'string', description: 'A password.', example: 'correct horse battery staple' },
  AuthenticatorCode: { type: 'string', description: 'A code from an authenticator app, or a recovery code.', example: '492039' },
  AuthenticatorType: { type: 'string', enum: ['totp', 'recovery_codes', 'webauthn'], description: 'A kind of second factor: an authenticator app, recovery codes, or security keys and passkeys.' },
  User: object(
    {
      id: { type: 'integer', description: "The user's id.", example: 42 },
      display: { type: 'string', description: 'A name to show: the full name, else the username or address.', example: 'Ada Lovelace' },
      has_usable_password: { type: 'boolean', description: 'Whether the account has a password it can sign in with.' },
      email: schema('Email'),
      username: schema('Username'),
    },
    ['id', 'display', 'has_usable_password'],
  ),
  AuthenticationMethod: {
    description: 'One proof of identity made in this session.',
    oneOf: [
      object({ method: { type: 'string', enum: ['password'] }, at: schema('Timestamp'), email: schema('Email'), username: schema('Username') }, ['method', 'at'], { title: 'A password, at login or to reauthenticate' }),
      object(
        {
          method: { type: 'string', enum: ['mfa'] },
          at: schema('Timestamp'),
          type: schema('AuthenticatorType'),
          reauthenticated: { type: 'boolean', description: 'Given to reauthenticate rather than at login.' },
          passwordless: { type: 'boolean', enum: [true], description: 'A passkey that signed in alone (type `webauthn`).' },
        },
        ['method', 'at', 'type'],
        { title: 'A second factor: a code, a security key, or a passkey sign-in' },
      ),
      object(
        { method: { type: 'string', enum: ['socialaccount'] }, at: schema('Timestamp'), provider: schema('ProviderID'), uid: schema('ProviderAccountID'), reauthenticated: { type: 'boolean' } },
        ['method', 'at', 'provider', 'uid', 'reauthenticated'],
        { title: 'A sign-in with a provider' },
      ),
      object({ method: { type: 'string', enum: ['code'] }, at: schema('Timestamp'), email: schema('Email') }, ['method', 'at', 'email'], { title: 'A code mailed to sign in' }),
    ],
  },
  Flow: object(
    {
      id: { type: 'string', enum: FLOW_IDS, description: 'What the client can do next.' },
      is_pending: { type: 'boolean', enum: [true], description: 'Present on the step a login waits at.' },
      types: arrayOf(schema('AuthenticatorType'), 'For `mfa_authenticate` and `mfa_reauthenticate`: the kinds of code the user can give.'),
      providers: arrayOf(schema('ProviderID'), 'For `provider_redirect` and `provider_token`: the providers that sign in that way.'),
      provider: schema('Provider'),
    },
    ['id'],
  ),
  ProviderID: { type: 'string', description: "A provider's id: an OpenID Connect app's `provider_id`.", example: 'corp' },
  ProviderAccountID: { type: 'string', description: "The person's id at the provider (its `sub`).", example: '248289761001' },
  Provider: object(
    {
      id: schema('ProviderID'),
      name: { type: 'string', description: 'The name to show on its button.', example: 'Corp SSO' },
      client_id: { type: 'string', description: "The app's client id at the provider: the audience of its ID tokens." },
      openid_configuration_url: { type: 'string', description: "An OpenID Connect provider's discovery document." },
      flows: arrayOf({ type: 'string', enum: ['provider_redirect', 'provider_token'] }, 'How a client may sign in with it: through a redirect (browser client), or with an ID token it already holds.'),
    },
    ['id', 'name', 'flows'],
  ),
  ProviderAccount: object({
    uid: schema('ProviderAccountID'),
    display: { type: 'string', description: 'A name to show: the one the provider gave, else the provider\'s.' },
    provider: schema('Provider'),
  }),
  PendingUser: object(
    {
      display: { type: 'string', description: 'A name to show.' },
      has_usable_password: { type: 'boolean', enum: [false], description: 'An account made through a provider has no password.' },
      email: schema('Email'),
      username: schema('Username'),
    },
    ['display', 'has_usable_password'],
    { description: 'The account the signup would make, as the provider described it; it has no id yet.' },
  ),
  UnauthenticatedMeta: object({ is_authenticated: { type: 'boolean', enum: [false] }, session_token: { type: 'string', description: 'App client: the session token to send from now on, when this request created or replaced it.' } }, ['is_authenticated']),
  AuthenticatedMeta: object({ is_authenticated: { type: 'boolean', enum: [true] }, session_token: { type: 'string', description: 'App client: the session token to send from now on, when this request created or replaced it.' } }, ['is_authenticated']),
  Authenticated: object({ user: schema('User'), methods: arrayOf(schema('AuthenticationMethod'), 'How the user proved who they are in this session, oldest first.') }),
  AuthenticatedResponse: object({ status: status(200), data: schema('Authenticated'), meta: schema('AuthenticatedMeta') }),
  AuthenticationResponse: object({ status: status(401), data: object({ flows: arrayOf(schema('Flow')) }), meta: schema('UnauthenticatedMeta') }),
  ReauthenticationResponse: object({
    status: status(401),
    data: object({ user: schema('User'), methods: arrayOf(schema('AuthenticationMethod')), flows: arrayOf(schema('Flow'), 'The ways to prove identity again.') }),
    meta: schema('AuthenticatedMeta'),
  }),
  SessionGoneResponse: object({ status: status(410), data: object({ flows: arrayOf(schema('Flow')) }), meta: schema('UnauthenticatedMeta') }),
  Error: object(
    {
      message: { type: 'string', description: 'What went wrong, for people.' },
      code: { type: 'string', description: 'What went wrong, for programs (allauth.headless\'s codes, e.g. `invalid`, `incorrect_code`, `email_password_mismatch`).' },
      param: { type: 'string', description: 'The request field the error is about, when there is one.' },
    },
    ['message', 'code'],
  ),
  Errors: { type: 'array', minItems: 1, items: schema('Error') },
  ErrorResponse: object({ status: status(400), errors: schema('Errors') }),
  AccountConfiguration: object({
    authentication_method: { type: 'string', enum: ['username', 'email', 'username_email'], description: 'The login methods in one word (older clients read this).' },
    login_methods: arrayOf({ type: 'string', enum: ['username', 'email'] }, 'What people may sign in with (ACCOUNT_LOGIN_METHODS).'),
    is_open_for_signup: { type: 'boolean', description: 'Whether signup is open now.' },
    email_verification_by_code_enabled: { type: 'boolean', description: 'Always false: addresses are confirmed by link.' },
    login_by_code_enabled: { type: 'boolean', description: 'Whether a login by a mailed code is offered (ACCOUNT_LOGIN_BY_CODE_ENABLED).' },
    password_reset_by_code_enabled: { type: 'boolean', description: 'Always false: passwords are reset by link.' },
  }),
  ConfigurationResponse: object({
    status: status(200),
    data: object(
      {
        account: schema('AccountConfiguration'),
        socialaccount: object({ providers: arrayOf(schema('Provider'), 'The providers offered, by name (the app client is shown only those that take a token).') }),
        mfa: object({
          supported_types: arrayOf(schema('AuthenticatorType'), 'The second factors people may set up (MFA_SUPPORTED_TYPES).'),
          passkey_login_enabled: { type: 'boolean', description: 'Whether a passkey signs in alone (MFA_PASSKEY_LOGIN_ENABLED).' },
        }),
        usersessions: object({ track_activity: { type: 'boolean', description: 'Always false: a session\'s last-seen time is kept, but not every request it made.' } }),
      },
      ['account'],
    ),
  }),
  EmailAddress: object({ email: schema('Email'), primary: { type: 'boolean' }, verified: { type: 'boolean' } }),
  Session: object(
    {
      id: { type: 'integer', description: 'An id for ending the session; not the secret that authenticates it.' },
      user_agent: { type: 'string' },
      ip: { type: 'string' },
      created_at: schema('Timestamp'),
      last_seen_at: schema('Timestamp'),
      is_current: { type: 'boolean', description: 'Whether this is the session making the request.' },
    },
    ['id', 'user_agent', 'ip', 'created_at', 'is_current'],
  ),
  TotpAuthenticator: object({
    type: { type: 'string', enum: ['totp'] },
    created_at: schema('Timestamp'),
    last_used_at: { type: 'number', nullable: true, description: 'When a code was last accepted (epoch seconds), null for never.' },
  }),
  RecoveryCodesAuthenticator: object({
    type: { type: 'string', enum: ['recovery_codes'] },
    created_at: schema('Timestamp'),
    last_used_at: { type: 'number', nullable: true, description: 'When a code was last accepted (epoch seconds), null for never.' },
    total_code_count: { type: 'integer', description: 'Codes in the set.' },
    unused_code_count: { type: 'integer', description: 'Codes not used yet.' },
  }),
  RecoveryCodesWithCodes: { allOf: [schema('RecoveryCodesAuthenticator'), object({ unused_codes: arrayOf(schema('AuthenticatorCode'), 'The codes not used yet.') })] },
  Authenticator: { oneOf: [schema('TotpAuthenticator'), schema('RecoveryCodesAuthenticator'), schema('WebAuthnAuthenticator')] },
  Login: {
    ...object({ username: schema('Username'), email: schema('Email'), password: schema('Password') }, ['password']),
    description: 'The password with the username or the email address, as the configuration\'s `login_methods` allow.',
    anyOf: [{ required: ['username'] }, { required: ['email'] }],
  },
  Signup: {
    ...object({ email: schema('Email'), username: schema('Username'), name: SIGNUP_NAME, password: schema('Password') }, ['email', 'password']),
    description: 'The username is asked for in projects that sign in by username, and ignored in the others; the name where ACCOUNT_SIGNUP_FIELDS lists it.',
  },
};

/** The project's own fields as members of a shape: each one's JSON Schema, under its name. */
function userFieldProperties(fields: readonly UserField[]): Json {
  return Object.fromEntries(fields.map((field) => [field.name, userFieldJsonSchema(field)]));
}

/**
 * Every named shape, as `addSchema` takes them; the flows' ids include the project's own login
 * stages (login-stage.ts), which a pending flow may name. The project's fields (docs/user-fields.md)
 * are members of two shapes: the signup's body holds those ACCOUNT_SIGNUP_FIELDS lists, and the
 * User holds those declared `api: true`, which every answer carrying the user sends (user.ts).
 */
export function headlessSchemas(customStageIds: readonly string[], signupUserFields: readonly UserField[] = [], apiUserFields: readonly UserField[] = []): Json[] {
  const flow = SCHEMAS.Flow as { properties: { id: Json & { enum: string[] } } };
  const withStages: Json = { ...flow, properties: { ...flow.properties, id: { ...flow.properties.id, enum: [...flow.properties.id.enum, ...customStageIds] } } };
  // None of the signup's is declared required here: the flow refuses a missing one beside every
  // other field's refusal.
  const signup = SCHEMAS.Signup as { properties: Json };
  // The answers are written from this shape, which sends only what it names: a field left out
  // here would be dropped from every user object. Each is always sent (its empty value when the
  // user has none), so each is required.
  const user = SCHEMAS.User as { properties: Json; required: string[] };
  const named = {
    ...SCHEMAS,
    ...WEBAUTHN_SCHEMAS,
    Flow: withStages,
    Signup: { ...signup, properties: { ...signup.properties, ...userFieldProperties(signupUserFields) } },
    User: { ...user, properties: { ...user.properties, ...userFieldProperties(apiUserFields) }, required: [...user.required, ...apiUserFields.map((field) => field.name)] },
  };
  return Object.entries(named).map(([id, shape]) => ({ $id: id, ...carryingSessionToken(shape) }));
}
