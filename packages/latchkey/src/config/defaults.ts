import type { DefaultSlot, DefaultValue, Environment, ProjectFacts } from './settings/declaration.js';
import { SETTING_DECLARATIONS } from './settings/index.js';
import type { SettingName, SettingValues } from './settings.js';

/**
 * The settings' defaults, as declared with each setting (settings/<group>.ts): what loadSettings
 * starts from before the project's files and the environment variables.
 */

export { DJANGO_HASHING_DEFAULTS, type DjangoHashingDefaults } from './settings/passwords.js';

const DECLARATIONS = Object.entries(SETTING_DECLARATIONS) as [SettingName, (typeof SETTING_DECLARATIONS)[SettingName]][];

/** Which of a setting's defaults applies in `environment`: its own, else the base; none when neither is given. */
export function defaultSlotIn(defaults: Partial<Record<DefaultSlot, unknown>>, environment: Environment): DefaultSlot | undefined {
  if (defaults[environment] !== undefined) return environment;
  return defaults.base !== undefined ? 'base' : undefined;
}

/** A default's value for this project (no setting's value is a function, so a function computes one). */
function valueOf<T>(value: DefaultValue<T>, project: ProjectFacts): T {
  return typeof value === 'function' ? (value as (project: ProjectFacts) => T)(project) : value;
}

/**
 * Every setting's default in `environment` for this project. Settings without one (SECRET_KEY,
 * and in production DATABASE_URL, EMAIL_URL and ADMIN_URL) are left out: loadSettings generates
 * the key outside production and requires the others from the environment.
 */
export function defaultValues(environment: Environment, project: ProjectFacts): Partial<SettingValues> {
  const values: Record<string, unknown> = {};
  for (const [name, { default: defaults }] of DECLARATIONS) {
    const slot = defaultSlotIn(defaults, environment);
    if (slot !== undefined) values[name] = valueOf(defaults[slot], project);
  }
  return values;
}

/**
 * The defaults shared by every environment that do not depend on the project. SECRET_KEY,
 * DATABASE_URL, EMAIL_URL, ADMIN_URL, ALLOWED_HOSTS and SITE_URL have none: each environment has
 * its own, and production must be told the first four (docs/settings.md). SITE_NAME,
 * ACCOUNT_LOGIN_METHODS and ACCOUNT_SIGNUP_FIELDS are computed from the project's file (defaultValues).
 */
export const BASE_DEFAULTS = Object.fromEntries(
  DECLARATIONS.flatMap(([name, { default: defaults }]) => (defaults.base === undefined || typeof defaults.base === 'function' ? [] : [[name, defaults.base]])),
) as Omit<SettingValues, 'SECRET_KEY' | 'ALLOWED_HOSTS' | 'DATABASE_URL' | 'EMAIL_URL' | 'ADMIN_URL' | 'SITE_URL' | 'SITE_NAME' | 'ACCOUNT_LOGIN_METHODS' | 'ACCOUNT_SIGNUP_FIELDS'>;

/** Host values that mean "this machine" (or every interface of it): a browser here reaches them as localhost. */
const THIS_MACHINE = new Set(['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost']);

/**
 * SITE_URL in local mode when nothing sets it: where the server listening on HOST and PORT is
 * reached from this machine, so that a mailed link and a provider's callback lead back to it
 * whatever port it runs on (`http://localhost:19080`).
 */
export function localSiteUrl(host: string, port: number): string {
  const name = THIS_MACHINE.has(host) ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return port === 80 ? `http://${name}` : `http://${name}:${port}`;
}
