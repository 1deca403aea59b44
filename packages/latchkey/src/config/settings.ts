import { z } from 'zod';
import { parseRateLimitRules, RATE_LIMIT_ACTIONS, RATE_LIMIT_SCOPES } from '../core/rate-limit/rules.js';
import { AUTHENTICATOR_TYPES, HASHER_NAMES, LOGIN_BY_CODE_REQUIRED_METHODS } from './choices.js';
import {
  booleanField,
  enumField,
  integerField,
  jsonObjectField,
  listField,
  optionalStringField,
  stringField,
  stringListField,
  type SettingField,
} from './fields.js';

export const ENVIRONMENTS = ['local', 'production', 'test'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const PASSWORD_VALIDATOR_NAMES = ['minimum_length', 'maximum_length', 'common', 'numeric', 'user_attribute_similarity'] as const;

/** Whether `text` is a rule list in allauth's rate-limit notation, read by the one parser the limiter uses. */
function isRateLimitRuleList(text: string): boolean {
  try {
    parseRateLimitRules(text);
    return true;
  } catch {
    return false;
  }
}

const rateLimitsSchema = z.union([z.literal(false), z.partialRecord(z.enum(RATE_LIMIT_ACTIONS), z.string().refine(isRateLimitRuleList))]);

const providersSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

/**
 * The single-page app's routes that Latchkey's emails link to when it serves a front end of its
 * own (allauth's HEADLESS_FRONTEND_URLS): absolute URLs, `{key}` standing for the mailed key.
 * `socialaccount_login_error` is where a provider's callback sends the browser when it cannot tell
 * which front end started the sign-in (its state is unknown, used or expired).
 */
export const FRONTEND_URL_NAMES = ['account_confirm_email', 'account_reset_password', 'account_reset_password_from_key', 'account_signup', 'socialaccount_login_error'] as const;
export type FrontendUrlName = (typeof FRONTEND_URL_NAMES)[number];
/** The purposes whose link carries a key, and so whose front-end URL must say where it goes (`{key}`). */
export const KEYED_FRONTEND_URLS = ['account_confirm_email', 'account_reset_password_from_key'] as const satisfies readonly FrontendUrlName[];
const frontendUrlsSchema = z.partialRecord(z.enum(FRONTEND_URL_NAMES), z.string().regex(/^https?:\/\/[^\s/?#]+(\/\S*)?$/));

/** A path segment such as `admin/` or `staff-8fk2/`: no leading slash, one trailing slash. */
const ADMIN_PATH = /^(?!\/)[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/$/;
/**
 * A path on this site such as `/` or `/users/~redirect/`, for the redirect settings. It must pass
 * the same test as a `next` parameter (http/kit/safe-redirect.ts), or the setting itself would be an
 * open redirect: one leading slash, never two (`//evil.example/` is another host) nor a slash and
 * a backslash (`/\evil.example/`, which browsers read the same way); no whitespace or control
 * character (browsers strip a tab or newline, turning `/\t/evil.example` into `//evil.example`);
 * no percent-encoded slash or backslash that a later decode could turn into either.
 */
const LOCAL_PATH = /^\/(?![/\\])(?!.*%(?:2f|5c))[\x21-\x5b\x5d-\x7e]*$/i;
const ABSOLUTE_HTTP_URL = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;
/** An origin exactly as browsers send it: scheme, host and optional port, nothing else. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * A host as a URL's hostname gives it: a domain name, an IPv4 address or a bracketed IPv6 one, in
 * any case, without port, path or trailing dot (`127.1` is refused: its hostname is `127.0.0.1`).
 */
function isHost(value: string): boolean {
  return URL.canParse(`https://${value}/`) && new URL(`https://${value}/`).hostname === value.toLowerCase() && !value.endsWith('.');
}

/**
 * Every setting, with its type. The name is the one used in the project's settings files; the
 * environment variable is `LATCHKEY_<NAME>` unless ENV_NAMES gives another (CONTRACT.md).
 */
export const SETTING_FIELDS = {
  SECRET_KEY: stringField('a string of at least 1 character (use 50 or more random characters)'),
  ALLOWED_HOSTS: stringListField('a comma-separated list of host names, e.g. example.com,www.example.com'),
  DATABASE_URL: stringField('sqlite:PATH, sqlite::memory: or postgres://user:pass@host:port/db'),
  EMAIL_URL: stringField('smtp://[user:pass@]host:port, smtps://..., console: or memory:'),
  DEFAULT_FROM_EMAIL: stringField('an email address, optionally with a display name: "Site <noreply@example.com>"'),
  REDIS_URL: optionalStringField('redis://[user:pass@]host:port[/db] or empty', /^(rediss?:\/\/\S+)?$/),
  HOST: stringField('a host name or IP address to listen on'),
  PORT: integerField(0, 65535),
  TRUST_PROXY_HOPS: integerField(0, 10),
  SITE_NAME: stringField('a non-empty name'),
  SITE_URL: stringField('an absolute http(s) URL without query, e.g. https://example.com', ABSOLUTE_HTTP_URL),
  ADMIN_URL: stringField('a path such as admin/ (no leading slash, one trailing slash)', ADMIN_PATH),
  ADMIN_FORCE_ALLAUTH: booleanField(),
  LOGIN_REDIRECT_URL: stringField('a path on this site starting with one slash, in ASCII (percent-encode other characters), e.g. / or /users/~redirect/', LOCAL_PATH),
  LOGOUT_REDIRECT_URL: stringField('a path on this site starting with one slash, in ASCII (percent-encode other characters), e.g. / or /accounts/login/', LOCAL_PATH),
  ACCOUNT_ALLOW_REGISTRATION: booleanField(),
  ACCOUNT_LOGIN_METHODS: listField(['username', 'email'] as const, 1),
  ACCOUNT_EMAIL_VERIFICATION: enumField(['mandatory', 'optional', 'none'] as const),
  ACCOUNT_EMAIL_SUBJECT_PREFIX: optionalStringField('any text, or empty for "[SITE_NAME] "', /^[^\r\n]*$/),
  ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS: integerField(1, 365),
  ACCOUNT_PASSWORD_RESET_TIMEOUT: integerField(60, 30 * 86400),
  ACCOUNT_LOGIN_TIMEOUT: integerField(60, 86400),
  ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: booleanField(),
  ACCOUNT_LOGIN_BY_CODE_ENABLED: booleanField(),
  ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: integerField(1, 100),
  ACCOUNT_LOGIN_BY_CODE_TIMEOUT: integerField(30, 86400),
  ACCOUNT_LOGIN_BY_CODE_REQUIRED: jsonObjectField(
    z.union([z.boolean(), z.array(z.enum(LOGIN_BY_CODE_REQUIRED_METHODS))]),
    `true, false, or a JSON list from ${LOGIN_BY_CODE_REQUIRED_METHODS.join('/')}`,
  ),
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: booleanField(),
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: integerField(1, 100),
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT: integerField(30, 86400),
  ACCOUNT_MAX_EMAIL_ADDRESSES: integerField(1, 100),
  ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: stringListField('a comma-separated list of domain names such as example.com, or empty for no restriction', z.string().regex(/^[a-z0-9.-]+\.[a-z0-9-]+$/i)),
  ACCOUNT_SESSION_REMEMBER: jsonObjectField(z.boolean().nullable(), 'true, false or null (ask with a checkbox)'),
  ACCOUNT_RATE_LIMITS: jsonObjectField(
    rateLimitsSchema,
    `false, or a JSON object from ${RATE_LIMIT_ACTIONS.join('/')} to rules like "10/m/ip,5/5m/ip+key" (scopes ${RATE_LIMIT_SCOPES.join(', ')})`,
  ),
  PASSWORD_HASHERS: listField(HASHER_NAMES, 1),
  PASSWORD_HASHING_CONCURRENCY: integerField(1, 256),
  PASSWORD_HASHING_QUEUE_LIMIT: integerField(0, 1_000_000),
  ARGON2_MEMORY_COST: integerField(8, 4 * 1024 * 1024),
  ARGON2_TIME_COST: integerField(1, 100),
  ARGON2_PARALLELISM: integerField(1, 64),
  PBKDF2_ITERATIONS: integerField(1, 100_000_000),
  BCRYPT_ROUNDS: integerField(4, 31),
  AUTH_PASSWORD_VALIDATORS: listField(PASSWORD_VALIDATOR_NAMES),
  PASSWORD_MIN_LENGTH: integerField(1, 1024),
  PASSWORD_MAX_BYTES: integerField(64, 65536),
  SESSION_COOKIE_NAME: stringField('a cookie name', /^[A-Za-z0-9_-]+$/),
  SESSION_COOKIE_AGE: integerField(60),
  SESSION_IDLE_TIMEOUT: integerField(60),
  SESSION_COOKIE_SECURE: booleanField(),
  CSRF_COOKIE_SECURE: booleanField(),
  SECURE_HSTS_SECONDS: integerField(0, 2 * 365 * 86400),
  SECURE_HSTS_INCLUDE_SUBDOMAINS: booleanField(),
  SECURE_HSTS_PRELOAD: booleanField(),
  CSRF_TRUSTED_ORIGINS: stringListField('a comma-separated list of origins such as https://app.example.com', z.string().refine(isOrigin)),
  SOCIALACCOUNT_PROVIDERS: jsonObjectField(providersSchema, 'a JSON object keyed by provider id'),
  SOCIALACCOUNT_AUTO_SIGNUP: booleanField(),
  SOCIALACCOUNT_EMAIL_VERIFICATION: jsonObjectField(z.enum(['mandatory', 'optional', 'none']).nullable(), '"mandatory", "optional", "none" or null (as ACCOUNT_EMAIL_VERIFICATION)'),
  SOCIALACCOUNT_LOGIN_ON_GET: booleanField(),
  SOCIALACCOUNT_REQUESTS_TIMEOUT: integerField(1, 120),
  SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: stringListField('a comma-separated list of host names or IP addresses such as keycloak.internal,10.0.0.5,[fd00::5], or empty', z.string().refine(isHost)),
  SOCIALACCOUNT_EMAIL_AUTHENTICATION: booleanField(),
  SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT: booleanField(),
  SOCIALACCOUNT_STORE_TOKENS: booleanField(),
  MFA_SUPPORTED_TYPES: listField(AUTHENTICATOR_TYPES),
  MFA_TOTP_PERIOD: integerField(15, 300),
  MFA_TOTP_DIGITS: integerField(6, 8),
  MFA_TOTP_TOLERANCE: integerField(0, 10),
  MFA_RECOVERY_CODE_COUNT: integerField(1, 100),
  MFA_RECOVERY_CODE_DIGITS: integerField(6, 12),
  MFA_TRUST_ENABLED: booleanField(),
  MFA_TRUST_COOKIE_AGE: integerField(60, 365 * 86400),
  MFA_PASSKEY_LOGIN_ENABLED: booleanField(),
  MFA_PASSKEY_SIGNUP_ENABLED: booleanField(),
  MFA_WEBAUTHN_RP_ID: optionalStringField('a domain name such as example.com (the site\'s host or a parent of it), or empty for SITE_URL\'s host', /^([a-z0-9-]+(\.[a-z0-9-]+)*)?$/i),
  MFA_WEBAUTHN_ALLOWED_ORIGINS: stringListField('a comma-separated list of origins such as https://app.example.com, or empty for SITE_URL\'s origin and CORS_ALLOWED_ORIGINS', z.string().refine(isOrigin)),
  HEADLESS_ONLY: booleanField(),
  HEADLESS_FRONTEND_URLS: jsonObjectField(frontendUrlsSchema, `a JSON object from ${FRONTEND_URL_NAMES.join('/')} to absolute URLs, {key} standing for the key`),
  HEADLESS_SERVE_SPECIFICATION: booleanField(),
  CORS_ALLOWED_ORIGINS: stringListField('a comma-separated list of origins such as https://app.example.com', z.string().refine(isOrigin)),
} satisfies Record<string, SettingField<unknown>>;

export type SettingName = keyof typeof SETTING_FIELDS;

type FieldValue<F> = F extends SettingField<infer T> ? T : never;
export type SettingValues = { [K in SettingName]: FieldValue<(typeof SETTING_FIELDS)[K]> };

/** Environment variables named otherwise than `LATCHKEY_<NAME>` (CONTRACT.md). */
export const ENV_NAMES: Partial<Record<SettingName, string>> = {
  DATABASE_URL: 'DATABASE_URL',
  EMAIL_URL: 'EMAIL_URL',
  DEFAULT_FROM_EMAIL: 'DEFAULT_FROM_EMAIL',
  REDIS_URL: 'REDIS_URL',
  HOST: 'HOST',
  PORT: 'PORT',
};

export function envNameOf(name: SettingName): string {
  return ENV_NAMES[name] ?? `LATCHKEY_${name}`;
}

export type UsernameType = 'username' | 'email';

/** The validated settings a running Latchkey holds: one object, passed in, never read from env deep in the code. */
export interface Settings extends SettingValues {
  readonly ENVIRONMENT: Environment;
  /** Fixed in the project's settings file at generation: it shapes the database schema. */
  readonly USERNAME_TYPE: UsernameType;
}
