import type { SettingField } from './fields.js';
import { ENVIRONMENTS, type Environment, type UsernameType, type ValueOf } from './settings/declaration.js';
import { SETTING_DECLARATIONS } from './settings/index.js';

/**
 * The settings as the rest of Latchkey sees them: their names, types and environment variables,
 * derived from the one declaration of each (settings/<group>.ts, where its default and its
 * documentation are too).
 */

export { ENVIRONMENTS, type Environment, type UsernameType };
export { PASSWORD_VALIDATOR_NAMES } from './settings/passwords.js';
export { FRONTEND_URL_NAMES, KEYED_FRONTEND_URLS, type FrontendUrlName } from './settings/headless.js';

type Declarations = typeof SETTING_DECLARATIONS;

/** The name of a setting, as in the project's settings file (`ACCOUNT_EMAIL_VERIFICATION`). */
export type SettingName = keyof Declarations;

/**
 * Every setting, with its type. The name is the one used in the project's settings files; the
 * environment variable is `LATCHKEY_<NAME>` unless ENV_NAMES gives another (docs/settings.md).
 */
export const SETTING_FIELDS = Object.fromEntries(Object.entries(SETTING_DECLARATIONS).map(([name, declaration]) => [name, declaration.field])) as {
  [K in SettingName]: Declarations[K]['field'];
} satisfies Record<string, SettingField<unknown>>;

/** Every setting's value by name, with its type: what a settings file's `base`, `local`... give part of. */
export type SettingValues = { [K in SettingName]: ValueOf<(typeof SETTING_FIELDS)[K]> };

/** Environment variables named otherwise than `LATCHKEY_<NAME>` (docs/settings.md): the declarations' `variable`. */
export const ENV_NAMES: Partial<Record<SettingName, string>> = Object.fromEntries(
  Object.entries(SETTING_DECLARATIONS).flatMap(([name, declaration]) => (declaration.variable === undefined ? [] : [[name, declaration.variable]])),
);

export function envNameOf(name: SettingName): string {
  return ENV_NAMES[name] ?? `LATCHKEY_${name}`;
}

/** The validated settings a running Latchkey holds: one object, passed in, never read from env deep in the code. */
export interface Settings extends SettingValues {
  readonly ENVIRONMENT: Environment;
  /** Fixed in the project's settings file at generation: it shapes the database schema. */
  readonly USERNAME_TYPE: UsernameType;
}
