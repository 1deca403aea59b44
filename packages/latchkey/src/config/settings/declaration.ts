import type { SettingField } from '../fields.js';

/**
 * What one declaration says about a setting. Each setting is declared once, in the file of the
 * group docs/settings.md documents it under (settings/<group>.ts): its type, its default in each
 * environment, its environment variable and its documentation. Everything else is derived from
 * the declarations, so that none of these can drift from the others: the fields loadSettings
 * checks values with (SETTING_FIELDS), the defaults it starts from (defaults.ts), and the tables
 * of docs/settings.md (`npm run docs:settings`, settings/docs.ts).
 */

export const ENVIRONMENTS = ['local', 'production', 'test'] as const;
/** Where the project runs: `local`, `production` or `test`; each has its own defaults and checks. */
export type Environment = (typeof ENVIRONMENTS)[number];

/** How people log in: with a username, or with their email address (USERNAME_TYPE). */
export type UsernameType = 'username' | 'email';

/** What the project's settings file fixes at its top level, from which some defaults are computed. */
export interface ProjectFacts {
  readonly USERNAME_TYPE: UsernameType;
  readonly SITE_NAME: string;
  /** The production domain: the default for ALLOWED_HOSTS and SITE_URL in production. */
  readonly DOMAIN_NAME: string;
}

/** Where a default is given: `base` for every environment, or one environment's own value over it. */
export type DefaultSlot = 'base' | Environment;

/** A default: a value, or a function of the project's top-level facts (SITE_URL from DOMAIN_NAME). */
export type DefaultValue<T> = T | ((project: ProjectFacts) => T);

/**
 * A setting's defaults. An environment without a value of its own takes the base; a setting with
 * neither has no default there, and must be given (production's SECRET_KEY, DATABASE_URL, ...).
 * A value that depends on the machine (PASSWORD_HASHING_CONCURRENCY) is computed when the module
 * loads, as a plain value, and documented in words.
 */
export type SettingDefaults<T> = Partial<Record<DefaultSlot, DefaultValue<T>>>;

/** The placeholder, in a Default text, for the default value as the tables show it (`8000`, `a, b`, empty). */
export const VALUE = '{value}';

/**
 * How docs/settings.md documents a setting: the texts of its table row, in Markdown, written for
 * the page they appear in (links are relative to docs/).
 */
export interface SettingDocs {
  /** The Allowed column. (The one-line start-up error says `field.allowed` instead.) */
  allowed: string;
  /**
   * The Default column, for every environment (a string) or per slot. Without it the column shows
   * each environment's value (`8000`, or `local, test: … <br>production: …`). A text with {value}
   * adds words to the value (`{value} (14 days)`); one without describes a default that cannot be
   * shown as a value (computed from the project or the machine, or generated). An environment
   * with no default at all shows **required**.
   */
  default?: string | Partial<Record<DefaultSlot, string>>;
  /** The "What it does" column. */
  does: string;
}

export interface SettingDeclaration<T> {
  /** The type: how a value is checked, read from an environment variable, and named in errors. */
  field: SettingField<T>;
  /** The environment variable, when it is not LATCHKEY_<NAME> (the six names other tools know). */
  variable?: string;
  default: SettingDefaults<T>;
  docs: SettingDocs;
}

/** The type of the values a field accepts. */
export type ValueOf<F> = F extends SettingField<infer T> ? T : never;

/** Declares a setting: its type is the field's, and the defaults must be of it. */
export function setting<F extends SettingField<unknown>>(declaration: {
  field: F;
  variable?: string;
  default: SettingDefaults<ValueOf<F>>;
  docs: SettingDocs;
}): SettingDeclaration<ValueOf<F>> {
  return declaration as SettingDeclaration<ValueOf<F>>;
}

/**
 * An entry of the project's settings file that is not a setting (USERNAME_TYPE), documented in a
 * group's table all the same because readers look for it there. Its texts are the table's cells.
 */
export interface ProjectFileEntry {
  name: string;
  variable: string;
  allowed: string;
  default: string;
  does: string;
}

/** The settings documented under one heading of docs/settings.md, in the order of its table. */
export interface SettingGroup<D extends Record<string, SettingDeclaration<unknown>>> {
  /** Names the group's table between its markers in docs/settings.md. */
  id: string;
  /** Rows for project-file entries, shown before the settings. */
  projectFileEntries?: readonly ProjectFileEntry[];
  settings: D;
}
