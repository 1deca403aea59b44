import { LatchkeyError } from '../core/errors.js';
import { defaultValues, localSiteUrl } from './defaults.js';
import type { SettingField } from './fields.js';
import { readOrCreateLocalSecretKey } from './local-secret.js';
import { randomToken } from '../core/crypto.js';
import { maskUrlCredentials } from '../core/redact.js';
import { docsPage } from '../core/docs-page.js';
import { normaliseLanguageCode, supportedVariant } from '../core/i18n/languages.js';
import { parseEmailUrl } from './email-url.js';
import { parseDatabaseUrl } from './database-url.js';
import { signupFieldsProblem } from './signup-fields.js';
import { KEYED_FRONTEND_URLS } from './settings.js';
import { envNameOf, SETTING_FIELDS, type Environment, type SettingName, type Settings, type SettingValues, type UsernameType } from './settings.js';

/** What a project writes in its own settings files: fixed facts plus overrides per environment. */
export interface ProjectSettings {
  /** Chosen once at generation; never read from the environment because it shapes the schema. */
  USERNAME_TYPE: UsernameType;
  SITE_NAME: string;
  /** The production domain: the default for ALLOWED_HOSTS and SITE_URL in production. */
  DOMAIN_NAME: string;
  base?: Partial<SettingValues>;
  local?: Partial<SettingValues>;
  production?: Partial<SettingValues>;
  test?: Partial<SettingValues>;
}

/** Where loadSettings reads from: the environment variables (process.env by default) and the project folder. */
export interface LoadSettingsOptions {
  env?: NodeJS.ProcessEnv;
  /** Where local mode keeps its generated secret key (`.latchkey/secret-key`). */
  cwd?: string;
}

/** Variables that share the LATCHKEY_ prefix but are inputs to commands, not settings. */
const NON_SETTING_VARIABLES = new Set(['LATCHKEY_SUPERUSER_PASSWORD', 'LATCHKEY_SOCIALAPP_SECRET']);

/** Production refuses to start unless the operator has given these (docs/settings.md). */
const REQUIRED_IN_PRODUCTION: SettingName[] = ['SECRET_KEY', 'DATABASE_URL', 'EMAIL_URL', 'ADMIN_URL'];

/** The environment NODE_ENV names: `production` and `test` as such, anything else (or nothing) `local`. */
export function environmentFromNodeEnv(nodeEnv: string | undefined): Environment {
  if (nodeEnv === 'production') return 'production';
  if (nodeEnv === 'test') return 'test';
  return 'local';
}

/**
 * Builds the one settings object: library defaults, then the environment's defaults, then the
 * project's base and per-environment values, then environment variables. Any bad value stops
 * start-up with one line naming the variable, the value and what is allowed.
 */
export function loadSettings(project: ProjectSettings, options: LoadSettingsOptions = {}): Settings {
  const env = options.env ?? process.env;
  const environment = environmentFromNodeEnv(env.NODE_ENV);
  rejectUnknownVariables(env);

  const values: Record<string, unknown> = { ...defaultValues(environment, project) };
  for (const overrides of [project.base, project[environment]]) {
    for (const [name, value] of Object.entries(overrides ?? {})) {
      values[name] = mergeWithDefault(name, values[name], checkProjectValue(name, value));
    }
  }
  for (const name of Object.keys(SETTING_FIELDS) as SettingName[]) {
    const raw = env[envNameOf(name)];
    if (raw !== undefined) values[name] = mergeWithDefault(name, values[name], checkEnvValue(name, raw));
  }

  // Local mode: a SITE_URL nobody set follows the port (and host) the server listens on, and a
  // host it names is one the server answers. PORT=0 (any free port) is known only once listening,
  // too late for the settings: the declared default stays.
  const given = (name: SettingName) => [project.base, project[environment]].some((overrides) => overrides?.[name] !== undefined) || env[envNameOf(name)] !== undefined;
  if (environment === 'local' && !given('SITE_URL') && values.PORT !== 0) {
    values.SITE_URL = localSiteUrl(values.HOST as string, values.PORT as number);
    const siteHost = new URL(values.SITE_URL as string).hostname;
    const allowed = values.ALLOWED_HOSTS as string[];
    if (!given('ALLOWED_HOSTS') && !allowed.includes(siteHost)) values.ALLOWED_HOSTS = [...allowed, siteHost];
  }

  if (environment === 'production') {
    const missing = REQUIRED_IN_PRODUCTION.filter((name) => env[envNameOf(name)] === undefined || env[envNameOf(name)] === '');
    if (missing.length > 0) {
      throw settingsError(`Production needs these environment variables: ${missing.map(envNameOf).join(', ')}.`);
    }
  }
  if (values.SECRET_KEY === undefined) {
    // Local mode keeps one generated key across restarts so sessions survive; tests need none.
    values.SECRET_KEY = environment === 'local' ? readOrCreateLocalSecretKey(options.cwd ?? process.cwd()) : randomToken(48);
  }

  const settings = checkLanguages({ ...values, ENVIRONMENT: environment, USERNAME_TYPE: checkUsernameType(project.USERNAME_TYPE) } as Settings);
  checkLoginMethods(settings);
  checkSignupFields(settings);
  checkServiceUrls(settings);
  checkArgon2Memory(settings);
  checkFrontendUrls(settings);
  checkPasskeys(settings);
  checkHstsPreload(settings);
  for (const name of Object.keys(SETTING_FIELDS)) {
    if (settings[name as SettingName] === undefined) throw settingsError(`Setting ${name} has no value: set ${envNameOf(name as SettingName)}.`);
  }
  return Object.freeze(settings);
}

function rejectUnknownVariables(env: NodeJS.ProcessEnv): void {
  if (env.LATCHKEY_USERNAME_TYPE !== undefined) {
    throw settingsError(
      'LATCHKEY_USERNAME_TYPE cannot be set from the environment: USERNAME_TYPE is fixed in the project\'s settings file because it shapes the database schema.',
    );
  }
  const known = new Set((Object.keys(SETTING_FIELDS) as SettingName[]).map(envNameOf));
  for (const variable of Object.keys(env)) {
    if (variable.startsWith('LATCHKEY_') && !known.has(variable) && !NON_SETTING_VARIABLES.has(variable)) {
      throw settingsError(`${variable} is not a Latchkey setting; ${docsPage('settings.md')} lists the settings and their variables.`);
    }
  }
}

function fieldOf(name: string): SettingField<unknown> | undefined {
  return (SETTING_FIELDS as Record<string, SettingField<unknown>>)[name];
}

function checkProjectValue(name: string, value: unknown): unknown {
  const field = fieldOf(name);
  if (!field) throw settingsError(`Setting ${name} in the project's settings is not a Latchkey setting; ${docsPage('settings.md')} lists the settings.`);
  const result = field.schema.safeParse(value);
  if (!result.success) {
    throw settingsError(`Setting ${name}=${display(name, JSON.stringify(value) ?? String(value))} in the project's settings is not allowed: use ${field.allowed}.`);
  }
  return result.data;
}

function checkEnvValue(name: SettingName, raw: string): unknown {
  const field = SETTING_FIELDS[name] as SettingField<unknown>;
  const result = field.schema.safeParse(field.fromEnv(raw));
  if (!result.success) {
    throw settingsError(`${envNameOf(name)}=${display(name, JSON.stringify(raw))} is not allowed: use ${field.allowed}.`);
  }
  return result.data;
}

function checkUsernameType(value: unknown): UsernameType {
  if (value === 'username' || value === 'email') return value;
  throw settingsError(`Setting USERNAME_TYPE=${JSON.stringify(value)} in the project's settings is not allowed: use username or email.`);
}

function checkLoginMethods(settings: Settings): void {
  if (settings.USERNAME_TYPE === 'email' && settings.ACCOUNT_LOGIN_METHODS.includes('username')) {
    throw settingsError('ACCOUNT_LOGIN_METHODS cannot include username: this project logs in by email and its users have no username.');
  }
}

function checkSignupFields(settings: Settings): void {
  const problem = signupFieldsProblem(settings.ACCOUNT_SIGNUP_FIELDS, settings.USERNAME_TYPE);
  if (problem !== undefined) throw settingsError(`ACCOUNT_SIGNUP_FIELDS (${envNameOf('ACCOUNT_SIGNUP_FIELDS')}) ${problem}.`);
}

/**
 * As allauth does, a project that sets ACCOUNT_RATE_LIMITS to an object changes the actions it
 * names and keeps the defaults of the others; `false` switches every limit off.
 */
function mergeWithDefault(name: string, current: unknown, value: unknown): unknown {
  if (name === 'ACCOUNT_RATE_LIMITS' && value !== false && typeof current === 'object' && current !== null) {
    return { ...current, ...(value as object) };
  }
  return value;
}

/** DATABASE_URL and EMAIL_URL are checked at start-up, before anything tries to connect. */
function checkServiceUrls(settings: Settings): void {
  const checks: [SettingName, (value: string) => unknown][] = [
    ['DATABASE_URL', (value) => parseDatabaseUrl(value)],
    ['EMAIL_URL', parseEmailUrl],
  ];
  for (const [name, parse] of checks) {
    try {
      parse(settings[name] as string);
    } catch {
      throw settingsError(`${envNameOf(name)}=${display(name, JSON.stringify(settings[name]))} is not allowed: use ${SETTING_FIELDS[name].allowed}.`);
    }
  }
}

/** Argon2 needs at least 8 KiB of memory per lane; say so before the first login fails. */
function checkArgon2Memory(settings: Settings): void {
  if (settings.ARGON2_MEMORY_COST < 8 * settings.ARGON2_PARALLELISM) {
    throw settingsError(
      `${envNameOf('ARGON2_MEMORY_COST')}=${settings.ARGON2_MEMORY_COST} is not allowed: use at least 8 × ARGON2_PARALLELISM (${8 * settings.ARGON2_PARALLELISM}).`,
    );
  }
}

/**
 * Emails carry a key to the front end's confirmation and reset routes, so those routes must say
 * where it goes; and with HEADLESS_ONLY the pages that emails would otherwise link to do not
 * exist, so the front end must name the routes that take their place.
 */
function checkFrontendUrls(settings: Settings): void {
  const urls = settings.HEADLESS_FRONTEND_URLS;
  for (const name of KEYED_FRONTEND_URLS) {
    const url = urls[name];
    if (url !== undefined && !url.includes('{key}')) {
      throw settingsError(`${envNameOf('HEADLESS_FRONTEND_URLS')}: the ${name} URL ${JSON.stringify(url)} has no {key}: write {key} where the mailed key goes.`);
    }
  }
  const missing = KEYED_FRONTEND_URLS.filter((name) => urls[name] === undefined);
  if (settings.HEADLESS_ONLY && missing.length > 0) {
    throw settingsError(
      `${envNameOf('HEADLESS_ONLY')}=true needs ${envNameOf('HEADLESS_FRONTEND_URLS')} to name ${missing.join(' and ')}: without the account pages, emails would link to pages that do not exist.`,
    );
  }
}

/**
 * Passkey login and signup are WebAuthn ceremonies, so they need "webauthn" among the supported
 * second factors; a passkey signup has no password, so (as allauth) the address it gives must be
 * proved by a code before the passkey is made. A relying party id that is not the site's host or
 * a parent domain of it would make every ceremony fail in the browser, so it is refused here.
 */
function checkPasskeys(settings: Settings): void {
  const webauthn = settings.MFA_SUPPORTED_TYPES.includes('webauthn');
  for (const name of ['MFA_PASSKEY_LOGIN_ENABLED', 'MFA_PASSKEY_SIGNUP_ENABLED'] as const) {
    if (settings[name] && !webauthn) throw settingsError(`${envNameOf(name)}=true needs webauthn in ${envNameOf('MFA_SUPPORTED_TYPES')}.`);
  }
  if (settings.MFA_PASSKEY_SIGNUP_ENABLED && (settings.ACCOUNT_EMAIL_VERIFICATION !== 'mandatory' || !settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED)) {
    throw settingsError(
      `${envNameOf('MFA_PASSKEY_SIGNUP_ENABLED')}=true needs ${envNameOf('ACCOUNT_EMAIL_VERIFICATION')}=mandatory and ${envNameOf('ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED')}=true: a passkey signup proves its address by a code.`,
    );
  }
  const rpId = settings.MFA_WEBAUTHN_RP_ID;
  const siteHost = new URL(settings.SITE_URL).hostname;
  if (rpId !== null && siteHost !== rpId.toLowerCase() && !siteHost.endsWith(`.${rpId.toLowerCase()}`)) {
    throw settingsError(`${envNameOf('MFA_WEBAUTHN_RP_ID')}=${JSON.stringify(rpId)} is not allowed: use SITE_URL's host (${siteHost}) or a parent domain of it.`);
  }
}

/**
 * Language codes are kept as Django writes them (`pt-br`), whatever the project typed, and the
 * default language must be one the site offers (Django's translation.E004), or no request could
 * fall back to it.
 */
function checkLanguages(settings: Settings): Settings {
  const languages = [...new Set(settings.LANGUAGES.map(normaliseLanguageCode))];
  if (languages.length === 0) throw settingsError(`${envNameOf('LANGUAGES')} is empty: offer at least one language.`);
  const code = supportedVariant(settings.LANGUAGE_CODE, languages);
  if (code === undefined) {
    throw settingsError(`${envNameOf('LANGUAGE_CODE')}=${JSON.stringify(settings.LANGUAGE_CODE)} is not offered by ${envNameOf('LANGUAGES')} (${languages.join(', ')}): add it, or its general language.`);
  }
  return { ...settings, LANGUAGES: languages, LANGUAGE_CODE: normaliseLanguageCode(settings.LANGUAGE_CODE) };
}

/**
 * Asking browsers to preload the site (the `preload` directive) commits every subdomain to HTTPS
 * for good, and the preload list (hstspreload.org) accepts a site only with includeSubDomains and
 * a max-age of at least a year: a header without them would promise what it cannot get.
 */
function checkHstsPreload(settings: Settings): void {
  if (!settings.SECURE_HSTS_PRELOAD) return;
  if (!settings.SECURE_HSTS_INCLUDE_SUBDOMAINS || settings.SECURE_HSTS_SECONDS < HSTS_PRELOAD_MIN_SECONDS) {
    throw settingsError(
      `${envNameOf('SECURE_HSTS_PRELOAD')}=true needs ${envNameOf('SECURE_HSTS_INCLUDE_SUBDOMAINS')}=true and ${envNameOf('SECURE_HSTS_SECONDS')} of at least ${HSTS_PRELOAD_MIN_SECONDS} (a year), as the browsers' preload list requires.`,
    );
  }
}

const HSTS_PRELOAD_MIN_SECONDS = 365 * 86400;

/** Settings whose values may hold credentials anywhere inside them: never echoed. */
const NEVER_ECHOED = new Set(['SECRET_KEY', 'SOCIALACCOUNT_PROVIDERS']);

/** Secrets never appear in an error message: secret-bearing values are hidden, URL credentials masked. */
function display(name: string, text: string): string {
  if (NEVER_ECHOED.has(name)) return '<hidden>';
  return maskUrlCredentials(text);
}

function settingsError(message: string): LatchkeyError {
  return new LatchkeyError('configuration_invalid', message);
}
