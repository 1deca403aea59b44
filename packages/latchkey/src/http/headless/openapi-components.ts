import { WEBAUTHN_PARAMETERS, WEBAUTHN_REQUEST_BODIES, WEBAUTHN_RESPONSES, WEBAUTHN_SCHEMAS } from './openapi-webauthn.js';

/**
 * The shapes of the headless API's OpenAPI document (openapi.ts): schemas, request bodies,
 * parameters and responses (those of passkeys and security keys in openapi-webauthn.ts). Field
 * names and types are allauth.headless's, so that its clients read them unchanged; the
 * descriptions are Latchkey's own.
 */

type Json = Record<string, unknown>;

const schema = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const object = (properties: Json, required: string[] = Object.keys(properties), extra: Json = {}): Json => ({ type: 'object', properties, required, ...extra });
const status = (code: number): Json => ({ type: 'integer', enum: [code], description: 'The HTTP status, repeated.' });
const arrayOf = (items: Json, description?: string): Json => ({ type: 'array', items, ...(description === undefined ? {} : { description }) });
const json = (description: string, body: Json, extra: Json = {}): Json => ({ description, content: { 'application/json': { schema: body } }, ...extra });
const requestBody = (description: string, body: Json): Json => ({ description, required: true, content: { 'application/json': { schema: body } } });

/** A refusal in the envelope: the status and, usually, what went wrong. */
const refusal = (code: number): Json => object({ status: status(code), errors: schema('Errors') }, ['status']);

const FLOW_IDS = ['login', 'login_by_code', 'signup', 'verify_email', 'mfa_authenticate', 'mfa_trust', 'mfa_login_webauthn', 'mfa_signup_webauthn', 'reauthenticate', 'mfa_reauthenticate', 'provider_redirect', 'provider_token', 'provider_signup'];

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
    ...object({ email: schema('Email'), username: schema('Username'), password: schema('Password') }, ['email', 'password']),
    description: 'The username is asked for in projects that sign in by username, and ignored in the others.',
  },
};

const PARAMETERS: Json = {
  Client: { name: 'client', in: 'path', required: true, description: '`browser` (session cookie and CSRF header) or `app` (session token header).', schema: { type: 'string', enum: ['browser', 'app'] } },
  SessionToken: { name: 'X-Session-Token', in: 'header', required: false, description: 'App client: the session token from `meta.session_token`. Browsers send none.', schema: { type: 'string' } },
  EmailVerificationKey: { name: 'X-Email-Verification-Key', in: 'header', required: true, description: 'The key from the confirmation link.', schema: { type: 'string' } },
  PasswordResetKey: { name: 'X-Password-Reset-Key', in: 'header', required: true, description: 'The key from the reset link.', schema: { type: 'string' } },
};

const REQUEST_BODIES: Json = {
  Login: requestBody('Credentials.', schema('Login')),
  Signup: requestBody('The new account.', schema('Signup')),
  Reauthenticate: requestBody('The password.', object({ password: schema('Password') })),
  VerifyEmail: requestBody('The key from the confirmation link.', object({ key: { type: 'string' } })),
  RequestPassword: requestBody('The address to send the link to.', object({ email: schema('Email') })),
  RequestLoginCode: requestBody('The address to mail a sign-in code to.', object({ email: schema('Email') })),
  ConfirmLoginCode: requestBody('The mailed sign-in code.', object({ code: { type: 'string' } })),
  ResetPassword: requestBody('The key from the reset link and the new password.', object({ key: { type: 'string' }, password: schema('Password') })),
  Code: requestBody('A code.', object({ code: schema('AuthenticatorCode') })),
  Trust: requestBody('Whether to trust this browser.', object({ trust: { type: 'boolean' } })),
  EndSessions: requestBody('The sessions to end.', object({ sessions: arrayOf({ type: 'integer' }, 'Session ids, as listed.') })),
  ChangePassword: requestBody(
    'The current password (unless the account has none) and the new one.',
    object({ current_password: schema('Password'), new_password: schema('Password') }, ['new_password']),
  ),
  Email: requestBody('An address of the user.', object({ email: schema('Email') })),
  ProviderToken: requestBody(
    'The provider and the token the client got from it.',
    object(
      {
        provider: schema('ProviderID'),
        process: { type: 'string', enum: ['login', 'connect'], description: '`login` (the default) signs in or up; `connect` adds the provider account to the signed-in user.' },
        token: object(
          {
            client_id: { type: 'string', description: 'The client id the token was issued to: it names the app.' },
            id_token: { type: 'string', description: 'The ID token (required: it is what is verified).' },
            access_token: { type: 'string', description: 'The access token, kept with SOCIALACCOUNT_STORE_TOKENS.' },
          },
          ['client_id'],
        ),
      },
      ['provider', 'token'],
    ),
  ),
  ProviderSignup: requestBody('The signup form: the address, and the username in projects that sign in by username.', object({ email: schema('Email'), username: schema('Username') }, ['email'])),
  ProviderAccount: requestBody('The provider account to disconnect.', object({ provider: schema('ProviderID'), account: schema('ProviderAccountID') })),
  ProviderRedirect: {
    description: 'A real form post (not XHR), with the CSRF token in `csrfmiddlewaretoken`.',
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: object(
          {
            provider: schema('ProviderID'),
            callback_url: { type: 'string', description: "The front end's page to return to: a path on this site, or a URL at an origin of CORS_ALLOWED_ORIGINS." },
            process: { type: 'string', enum: ['login', 'connect'], description: '`connect` adds the provider account to the signed-in user.' },
            csrfmiddlewaretoken: { type: 'string', description: 'The `csrftoken` cookie\'s value.' },
          },
          ['provider', 'callback_url', 'csrfmiddlewaretoken'],
        ),
      },
    },
  },
  MarkPrimaryEmail: requestBody('The address to make primary.', object({ email: schema('Email'), primary: { type: 'boolean', enum: [true] } })),
};

const RESPONSES: Json = {
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
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  }),
  Unavailable: json('Try again later: the mail could not be sent, or the server is busy checking other passwords.', refusal(503)),
  StatusOK: json('Done.', object({ status: status(200) })),
  ToProvider: {
    description: "To the provider's sign-in; on failure, to `callback_url` with `error` and `error_process` (login or connect) in its query.",
    headers: { Location: { description: 'Where the browser goes.', schema: { type: 'string' } } },
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

export const HEADLESS_COMPONENTS: Json = {
  schemas: { ...SCHEMAS, ...WEBAUTHN_SCHEMAS },
  parameters: { ...PARAMETERS, ...WEBAUTHN_PARAMETERS },
  requestBodies: { ...REQUEST_BODIES, ...WEBAUTHN_REQUEST_BODIES },
  responses: { ...RESPONSES, ...WEBAUTHN_RESPONSES },
};
