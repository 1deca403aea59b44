import type { ProjectSettings } from '@latchkey/core';

/**
 * The project's settings, all in one place (as cookiecutter-django's config/settings/): `base`
 * applies everywhere, then the section of the running environment (NODE_ENV: production, test,
 * anything else is local), then environment variables, which override everything: each setting X
 * is read from LATCHKEY_X (DATABASE_URL, EMAIL_URL, DEFAULT_FROM_EMAIL, REDIS_URL, HOST and PORT
 * keep their plain names). Latchkey's node_modules/@latchkey/core/docs/settings.md lists every setting.
 *
 * USERNAME_TYPE was chosen when the project was generated; it shapes the database schema, so it
 * is not read from the environment.
 */
export const projectSettings: ProjectSettings = {
  USERNAME_TYPE: 'username',
  SITE_NAME: 'My Awesome Project',
  DOMAIN_NAME: 'example.com',
  base: {
    // Accounts (allauth's ACCOUNT_* settings). Public signup, local and social: LATCHKEY_ACCOUNT_ALLOW_REGISTRATION.
    ACCOUNT_ALLOW_REGISTRATION: true,
    // Users log in with their username (set at generation, from USERNAME_TYPE).
    ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
    ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS: 3,
    ACCOUNT_PASSWORD_RESET_TIMEOUT: 3 * 86400,
    ACCOUNT_LOGIN_TIMEOUT: 15 * 60,
    ACCOUNT_MAX_EMAIL_ADDRESSES: 5,
    // Read by src/users/adapters.ts: empty allows addresses at any domain.
    ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: [],
    // null: the login form asks "Remember me"; true or false decides for everyone.
    ACCOUNT_SESSION_REMEMBER: null,
    // Languages (Django's LANGUAGE_CODE and LANGUAGES): a request gets the language its person chose,
    // else the first one its browser asks for that LANGUAGES offers, else LANGUAGE_CODE (chosen when
    // the project was generated). The project's own messages are translated in locale/ (README.md,
    // "Translations"), Latchkey's in its own catalogs; remove a language to stop offering it.
    LANGUAGE_CODE: 'en-us',
    LANGUAGES: ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'],
    // Where a login lands without a `next` (the user's own page, through src/users/pages.ts), and a logout.
    LOGIN_REDIRECT_URL: '/users/~redirect/',
    LOGOUT_REDIRECT_URL: '/',
    // Sessions: two weeks at most, a week without a visit ends them.
    SESSION_COOKIE_AGE: 14 * 86400,
    SESSION_IDLE_TIMEOUT: 7 * 86400,
    // Login by a mailed code ("Mail me a sign-in code", headless auth/code/*); false leaves the password only.
    ACCOUNT_LOGIN_BY_CODE_ENABLED: true,
    // Two-factor authentication (allauth.mfa): an authenticator app, recovery codes, and security keys or passkeys; drop 'webauthn' for no keys.
    MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'],
    // "Sign in with a passkey": a passkey alone signs in (it counts as both factors); false keeps keys a second factor only.
    MFA_PASSKEY_LOGIN_ENABLED: true,
    // Verification by a mailed code instead of a link, and signup with an address and a passkey (no password). A
    // passkey signup proves its address by that code, so turn both on together, as allauth's example backend does;
    // it also needs ACCOUNT_EMAIL_VERIFICATION 'mandatory' (production's; locally set it below), or start-up refuses.
    ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: false,
    MFA_PASSKEY_SIGNUP_ENABLED: false,
    MFA_RECOVERY_CODE_COUNT: 10,
    MFA_TRUST_ENABLED: false,
    // Social sign-in: no provider is configured. An OpenID Connect identity provider, Google and
    // GitHub are added from the environment (README.md, "Social sign-in"). A getter, so that it is
    // read when the settings load, after .envs/local.env has been read into the environment.
    get SOCIALACCOUNT_PROVIDERS() {
      return { openid_connect: { APPS: openIdConnectAppsFromEnvironment() }, ...namedProvidersFromEnvironment() };
    },
    // The headless API for single-page and mobile apps: the account pages stay on, and no other
    // origin may call the APIs with credentials until listed in LATCHKEY_CORS_ALLOWED_ORIGINS.
    HEADLESS_ONLY: false,
    CORS_ALLOWED_ORIGINS: [],
  },
  local: {
    // Verification is offered, not required, while developing; the links are in the console.
    ACCOUNT_EMAIL_VERIFICATION: 'optional',
    HEADLESS_SERVE_SPECIFICATION: true,
  },
  production: {
    ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  },
  test: {},
};

/**
 * The OpenID Connect app that OIDC_PROVIDER_ID, OIDC_NAME, OIDC_CLIENT_ID, OIDC_SECRET and
 * OIDC_SERVER_URL describe, or none when OIDC_PROVIDER_ID is not set. The secret stays in the
 * environment, never in a committed file.
 */
function openIdConnectAppsFromEnvironment() {
  const { OIDC_PROVIDER_ID, OIDC_NAME, OIDC_CLIENT_ID, OIDC_SECRET, OIDC_SERVER_URL } = process.env;
  if (!OIDC_PROVIDER_ID) return [];
  return [
    {
      provider_id: OIDC_PROVIDER_ID,
      name: OIDC_NAME ?? OIDC_PROVIDER_ID,
      client_id: OIDC_CLIENT_ID ?? '',
      secret: OIDC_SECRET ?? '',
      settings: { server_url: OIDC_SERVER_URL ?? '' },
    },
  ];
}

/**
 * Google and GitHub, each when its client id is in the environment (GOOGLE_CLIENT_ID and
 * GOOGLE_SECRET, GITHUB_CLIENT_ID and GITHUB_SECRET). Another named provider is added the same
 * way, under its id (Latchkey's node_modules/@latchkey/core/docs/social.md lists them).
 */
function namedProvidersFromEnvironment() {
  const providers: Record<string, { APPS: { client_id: string; secret: string }[] }> = {};
  for (const [id, prefix] of [['google', 'GOOGLE'], ['github', 'GITHUB']] as const) {
    const clientId = process.env[`${prefix}_CLIENT_ID`];
    if (clientId) providers[id] = { APPS: [{ client_id: clientId, secret: process.env[`${prefix}_SECRET`] ?? '' }] };
  }
  return providers;
}
