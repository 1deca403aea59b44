/**
 * What an app's `settings` may hold, checked in one place for every way an app arrives: start-up
 * for the apps of SOCIALACCOUNT_PROVIDERS (directory.ts), the admin and `manage socialapp add` for
 * those of the database (flows/manage-apps.ts), and each provider when it is built from an app.
 * Unchecked, a value of the wrong type is used as it comes: a scope written as one string is
 * spread into its characters, an object is sent as "[object Object]", the string "false" is true.
 *
 * A provider kind names the keys it reads, each with a reader that takes the JSON value and gives
 * the typed one or says what is wrong; the keys every kind honours (hidden, verified_email,
 * email_authentication) are checked for all. Keys no reader names are left alone, as allauth's
 * providers ignore what they do not read. A message names the key and the type given; it repeats
 * a value only where that is the point (a URL, a scope, a choice), since an app's settings may
 * hold a private key (Apple's).
 */
import { LatchkeyError } from '../../core/errors.js';
import { SECURE_URL_RULE, secureUrl } from './secure-url.js';

/** What is wrong with one key of an app's settings. */
export interface SettingProblem {
  /** The key to fix, as the settings spell it: `scope`, `server_url`. */
  key: string;
  /** 'required': the key is missing; 'invalid': its value cannot be used. */
  reason: 'required' | 'invalid';
  /** For the operator, without a trailing period: `scope must be a list of strings, not a string: ...`. */
  message: string;
}

/** A key's JSON value as the typed value a provider uses, or what is wrong with it (a message that starts with the key). */
export type SettingReader<T> = (value: unknown, key: string) => { value: T } | { problem: string };

/** The keys a provider kind reads, and those that must be given (with what they are, for the message). */
export interface SettingsSpec {
  readers: Readonly<Record<string, SettingReader<unknown>>>;
  required?: Readonly<Record<string, string>>;
}

/** How a message names what was given instead, without its value. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'string' ? 'a string' : `a ${typeof value}`;
}

/** true or false, for a provider kind's settings reader (a JSON boolean, not the string "true"). */
export const aBoolean: SettingReader<boolean> = (value, key) =>
  typeof value === 'boolean' ? { value } : { problem: `${key} must be true or false, not ${kindOf(value)}` };

/** A non-empty string. */
export const aText: SettingReader<string> = (value, key) =>
  typeof value === 'string' && value.trim() !== '' ? { value } : { problem: `${key} must be a non-empty string, not ${value === '' ? 'an empty one' : kindOf(value)}` };

/** A list of strings (scopes): one string is refused, with the list it probably meant. */
export const aTextList: SettingReader<string[]> = (value, key) => {
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return { value: [...value] };
  if (typeof value === 'string') {
    const meant = value.split(/[\s,]+/).filter((item) => item !== '');
    return { problem: `${key} must be a list of strings, not a string: write ${JSON.stringify(meant)}` };
  }
  return { problem: `${key} must be a list of strings, not ${Array.isArray(value) ? 'a list holding something else' : kindOf(value)}` };
};

/**
 * Extra query parameters (auth_params): an object whose values are strings; numbers and true/false
 * are sent as their text (GitHub's `allow_signup: false`), anything else is refused.
 */
export const parameters: SettingReader<Record<string, string>> = (value, key) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: `${key} must be an object of parameters, such as {"prompt": "login"}, not ${kindOf(value)}` };
  const read: Record<string, string> = {};
  for (const [name, item] of Object.entries(value)) {
    if (!['string', 'number', 'boolean'].includes(typeof item)) return { problem: `${key}.${name} must be a string, not ${kindOf(item)}` };
    read[name] = String(item);
  }
  return { value: read };
};

/** A reader that accepts one of `choices` and refuses any other value, naming the choices. */
export function oneOf<T extends string>(choices: readonly T[]): SettingReader<T> {
  return (value, key) =>
    choices.includes(value as T)
      ? { value: value as T }
      : { problem: `${key} must be one of ${choices.map((choice) => JSON.stringify(choice)).join(', ')}, not ${typeof value === 'string' ? JSON.stringify(value) : kindOf(value)}` };
}

/** A URL Latchkey sends a person or its credentials to (secure-url.ts). */
export const anEndpoint: SettingReader<URL> = (value, key) => {
  const url = secureUrl(value);
  if (url !== undefined) return { value: url };
  return { problem: typeof value === 'string' ? `${key} ${JSON.stringify(value)} is not an https URL (${SECURE_URL_RULE})` : `${key} must be an https URL, not ${kindOf(value)}` };
};

/** The keys every provider's apps may have, read by the sign-in flows whatever the kind. */
const COMMON_READERS: Readonly<Record<string, SettingReader<unknown>>> = {
  hidden: aBoolean,
  verified_email: aBoolean,
  email_authentication: aBoolean,
};

/** The first problem of an app of `provider` with these settings, or undefined when the spec takes them. */
export function checkSettings(provider: string, settings: Readonly<Record<string, unknown>>, spec: SettingsSpec): SettingProblem | undefined {
  for (const [key, what] of Object.entries(spec.required ?? {})) {
    if (settings[key] === undefined || settings[key] === '') return { key, reason: 'required', message: `${/^[aeiou]/.test(key) ? 'an' : 'a'} ${key} is required for ${provider} (${what})` };
  }
  for (const [key, reader] of Object.entries({ ...COMMON_READERS, ...spec.readers })) {
    if (settings[key] === undefined) continue;
    const read = reader(settings[key], key);
    if ('problem' in read) return { key, reason: 'invalid', message: read.problem };
  }
  return undefined;
}

/** The problem as a sentence of its own: "A server_url is required ...", "scope must be ...". */
export function settingProblemSentence(problem: SettingProblem): string {
  const message = problem.reason === 'required' ? problem.message.charAt(0).toUpperCase() + problem.message.slice(1) : problem.message;
  return `${message}.`;
}

/** The error for an app whose settings a provider cannot be built from, naming the app. */
export function unusableSettings(appId: string, problem: SettingProblem): LatchkeyError {
  return new LatchkeyError('configuration_invalid', `The social app "${appId}" has unusable settings: ${problem.message}.`);
}

/**
 * Settings checked against the spec, then read key by key: what a provider builds itself from.
 * Throws unusableSettings for settings the spec refuses.
 */
export function readSettings(provider: string, app: { id: string; settings: Readonly<Record<string, unknown>> }, spec: SettingsSpec): SettingsRead {
  const problem = checkSettings(provider, app.settings, spec);
  if (problem !== undefined) throw unusableSettings(app.id, problem);
  return {
    valueOf<T>(key: string, reader: SettingReader<T>): T | undefined {
      if (app.settings[key] === undefined) return undefined;
      const read = reader(app.settings[key], key);
      // The spec's reader for the key took the value above; another reader is a mistake in the provider.
      if ('problem' in read) throw new Error(`The ${provider} provider reads settings.${key} with a reader its spec does not name for it.`);
      return read.value;
    },
  };
}

export interface SettingsRead {
  /** The key's value read by `reader` (the one the spec names for it), undefined when the key is absent. */
  valueOf<T>(key: string, reader: SettingReader<T>): T | undefined;
}
