import { availableParallelism } from 'node:os';
import type { HasherName } from './choices.js';
import type { Environment, SettingValues } from './settings.js';

/** The parameters of Django's password hashers, as the hashing service (account/passwords/) takes them. */
export interface DjangoHashingDefaults {
  hashers: HasherName[];
  argon2: { memoryCost: number; timeCost: number; parallelism: number };
  pbkdf2Iterations: number;
  bcryptRounds: number;
}

/**
 * Django's own parameters. The PBKDF2 count is that of Django 6.1 (August 2026), the current
 * release: 6.0 had 1,200,000, and the 6.2 release notes (docs.djangoproject.com/en/dev/releases/6.2/)
 * raise it "from 1,500,000 to 1,800,000". Argon2's m=102400, t=2, p=8 and bcrypt's 12 rounds are
 * unchanged since Django 3.2. The order is the one Django's documentation gives for using Argon2
 * (Argon2 first, the rest kept so old hashes still verify and get upgraded); Django's stock
 * PASSWORD_HASHERS lists PBKDF2 first instead. Plain `bcrypt` comes last, read only: Django's
 * stock list leaves it out because Django writes it only for a project that asks, but such a
 * project's users must sign in after moving here (manage import-django), as pbkdf2_sha1's do. A
 * reader costs nothing where no such hash is stored (the bcrypt threads start on first use), and
 * it widens nothing: a stored hash is matched only by its own password, and is replaced by an
 * argon2 hash at its first successful login.
 */
export const DJANGO_HASHING_DEFAULTS: DjangoHashingDefaults = Object.freeze({
  // Frozen all the way down, so no caller can change the defaults every other caller sees.
  hashers: Object.freeze(['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256', 'bcrypt']) as HasherName[],
  argon2: Object.freeze({ memoryCost: 102_400, timeCost: 2, parallelism: 8 }),
  pbkdf2Iterations: 1_500_000,
  bcryptRounds: 12,
});


/**
 * Settings a project does not have to give. SECRET_KEY, DATABASE_URL, EMAIL_URL, ADMIN_URL and
 * ALLOWED_HOSTS have no production default on purpose: production must be told (CONTRACT.md).
 */
export const BASE_DEFAULTS: Omit<SettingValues, 'SECRET_KEY' | 'ALLOWED_HOSTS' | 'DATABASE_URL' | 'EMAIL_URL' | 'ADMIN_URL' | 'SITE_URL' | 'SITE_NAME' | 'ACCOUNT_LOGIN_METHODS'> = {
  DEFAULT_FROM_EMAIL: 'webmaster@localhost',
  REDIS_URL: null,
  HOST: '0.0.0.0',
  PORT: 8000,
  TRUST_PROXY_HOPS: 0,
  ADMIN_FORCE_ALLAUTH: false,
  // Where a login without a safe `next`, and a logout, land: the home page, as in allauth.
  LOGIN_REDIRECT_URL: '/',
  LOGOUT_REDIRECT_URL: '/',
  ACCOUNT_ALLOW_REGISTRATION: true,
  ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  ACCOUNT_EMAIL_SUBJECT_PREFIX: null,
  ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS: 3,
  ACCOUNT_PASSWORD_RESET_TIMEOUT: 3 * 86400,
  ACCOUNT_LOGIN_TIMEOUT: 15 * 60,
  // Confirming the address signs in only the login that waits for it in the same session, and only
  // when the project asks for it (allauth's default: off, the person signs in themselves).
  ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: false,
  // Login by a mailed code (allauth's defaults): off; three wrong tries; a code lives three minutes.
  ACCOUNT_LOGIN_BY_CODE_ENABLED: false,
  ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 3,
  ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180,
  ACCOUNT_LOGIN_BY_CODE_REQUIRED: false,
  // Verification by a mailed code instead of a link (allauth's defaults): off; three wrong tries;
  // a code lives fifteen minutes.
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: false,
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 3,
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT: 900,
  ACCOUNT_MAX_EMAIL_ADDRESSES: 5,
  // Used by the project's adapter (the example site's and generated projects'): empty allows any domain.
  ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: [],
  ACCOUNT_SESSION_REMEMBER: null,
  // allauth's defaults, except that an account's five failures in five minutes are counted per
  // address (ip+key), so a stranger who uses them up holds back only their own address; and, as
  // NIST SP 800-63B asks, never more than 100 failures for one account in a day, from anywhere.
  // docs/accounts.md ("Rate limits") says why.
  ACCOUNT_RATE_LIMITS: {
    login: '30/m/ip',
    login_failed: '10/m/ip,5/5m/ip+key,100/d/key',
    signup: '20/m/ip',
    confirm_email: '1/3m/key',
    reset_password: '20/m/ip,5/m/key',
    reset_password_from_key: '20/m/ip',
    change_password: '5/m/user',
    manage_email: '10/m/user',
    reauthenticate: '10/m/user',
    request_login_code: '20/m/ip,3/m/key',
  },
  PASSWORD_HASHERS: [...DJANGO_HASHING_DEFAULTS.hashers],
  // argon2 and PBKDF2 run on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says
  // otherwise), which file access and DNS share: leave at least one thread free for them.
  PASSWORD_HASHING_CONCURRENCY: Math.max(1, Math.min(availableParallelism(), 3)),
  // Logins beyond this many waiting for a hash are refused at once (server_busy, a 503) instead
  // of queueing without bound behind a flood.
  PASSWORD_HASHING_QUEUE_LIMIT: 1000,
  // Django's parameters (argon2 memory in KiB; PBKDF2 iterations of the current Django release).
  ARGON2_MEMORY_COST: DJANGO_HASHING_DEFAULTS.argon2.memoryCost,
  ARGON2_TIME_COST: DJANGO_HASHING_DEFAULTS.argon2.timeCost,
  ARGON2_PARALLELISM: DJANGO_HASHING_DEFAULTS.argon2.parallelism,
  PBKDF2_ITERATIONS: DJANGO_HASHING_DEFAULTS.pbkdf2Iterations,
  BCRYPT_ROUNDS: DJANGO_HASHING_DEFAULTS.bcryptRounds,
  AUTH_PASSWORD_VALIDATORS: ['minimum_length', 'maximum_length', 'common', 'numeric', 'user_attribute_similarity'],
  PASSWORD_MIN_LENGTH: 8,
  PASSWORD_MAX_BYTES: 4096,
  SESSION_COOKIE_NAME: 'sessionid',
  SESSION_COOKIE_AGE: 14 * 86400,
  SESSION_IDLE_TIMEOUT: 7 * 86400,
  SESSION_COOKIE_SECURE: false,
  CSRF_COOKIE_SECURE: false,
  // Django's: no Strict-Transport-Security unless asked (production asks, below). Subdomains and
  // the browsers' preload list are the operator's decision: both bind hosts beyond this site.
  SECURE_HSTS_SECONDS: 0,
  SECURE_HSTS_INCLUDE_SUBDOMAINS: false,
  SECURE_HSTS_PRELOAD: false,
  CSRF_TRUSTED_ORIGINS: [],
  SOCIALACCOUNT_PROVIDERS: {},
  // allauth's: a new person signs up without a form when the provider gave a free address; email
  // verification as for local accounts; a GET only shows a button (no login CSRF by link); a
  // provider that does not answer within 5 seconds fails the sign-in.
  SOCIALACCOUNT_AUTO_SIGNUP: true,
  SOCIALACCOUNT_EMAIL_VERIFICATION: null,
  SOCIALACCOUNT_LOGIN_ON_GET: false,
  SOCIALACCOUNT_REQUESTS_TIMEOUT: 5,
  // In production no provider may be on a loopback or private address unless listed here.
  SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: [],
  // Never sign in to an existing local account by a matching address unless the project (or the
  // provider's settings) says that provider's verified addresses are to be trusted.
  SOCIALACCOUNT_EMAIL_AUTHENTICATION: false,
  SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT: false,
  // A provider's access and refresh tokens are kept (encrypted) only when the project asks.
  SOCIALACCOUNT_STORE_TOKENS: false,
  // allauth.mfa's defaults: HMAC-SHA1 with a 30 s step and 6 digits (what every authenticator app
  // supports), no extra steps of drift, 10 recovery codes of 8 digits; "trust this browser" off.
  MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes'],
  MFA_TOTP_PERIOD: 30,
  MFA_TOTP_DIGITS: 6,
  MFA_TOTP_TOLERANCE: 0,
  MFA_RECOVERY_CODE_COUNT: 10,
  MFA_RECOVERY_CODE_DIGITS: 8,
  MFA_TRUST_ENABLED: false,
  MFA_TRUST_COOKIE_AGE: 14 * 86400,
  // Passkeys (MFA_SUPPORTED_TYPES with "webauthn"): as a second factor only, unless the project
  // turns on passkey login and passkey signup. The relying party is SITE_URL's host, and a
  // ceremony is accepted from SITE_URL's origin and the SPA origins of CORS_ALLOWED_ORIGINS.
  MFA_PASSKEY_LOGIN_ENABLED: false,
  MFA_PASSKEY_SIGNUP_ENABLED: false,
  MFA_WEBAUTHN_RP_ID: null,
  MFA_WEBAUTHN_ALLOWED_ORIGINS: [],
  // The headless API (allauth.headless): pages stay on, emails link to them, no specification
  // served, and no other origin may call the API with credentials.
  HEADLESS_ONLY: false,
  HEADLESS_FRONTEND_URLS: {},
  HEADLESS_SERVE_SPECIFICATION: false,
  CORS_ALLOWED_ORIGINS: [],
};

/** What each environment changes on top of BASE_DEFAULTS (before the project's own files). */
export function environmentDefaults(environment: Environment, domainName: string): Partial<SettingValues> {
  switch (environment) {
    case 'local':
      return {
        HOST: '127.0.0.1',
        DATABASE_URL: 'sqlite:./db.sqlite3',
        EMAIL_URL: 'console:',
        ADMIN_URL: 'admin/',
        SITE_URL: 'http://localhost:8000',
        ALLOWED_HOSTS: ['localhost', '127.0.0.1', '[::1]'],
        ACCOUNT_EMAIL_VERIFICATION: 'optional',
        HEADLESS_SERVE_SPECIFICATION: true,
      };
    case 'test':
      return {
        HOST: '127.0.0.1',
        DATABASE_URL: 'sqlite::memory:',
        EMAIL_URL: 'memory:',
        ADMIN_URL: 'admin/',
        SITE_URL: 'http://testserver',
        ALLOWED_HOSTS: ['testserver', 'localhost', '127.0.0.1'],
        // Real argon2id, with cheap parameters so the suite stays fast (Django's test settings
        // do the same with a fast hasher). Production parameters are checked in their own tests.
        ARGON2_MEMORY_COST: 64,
        ARGON2_TIME_COST: 1,
        ARGON2_PARALLELISM: 1,
        PBKDF2_ITERATIONS: 1000,
        BCRYPT_ROUNDS: 4,
      };
    case 'production':
      return {
        SITE_URL: `https://${domainName}`,
        ALLOWED_HOSTS: [domainName],
        SESSION_COOKIE_NAME: '__Host-sessionid',
        SESSION_COOKIE_SECURE: true,
        CSRF_COOKIE_SECURE: true,
        // A year: browsers that have seen the site once never try it over plain HTTP again, so an
        // attacker on the network cannot strip TLS from the next visit (RFC 6797 section 2.3).
        SECURE_HSTS_SECONDS: 365 * 86400,
      };
  }
}
