/**
 * ACCOUNT_SIGNUP_FIELDS, with allauth 65's meaning: the fields the signup asks, in the form's
 * order, a trailing `*` marking one required. Read here once, for the settings' checks, the signup
 * flow and the pages.
 */
import type { UserField } from '../core/user-fields.js';

/** The fields a signup can ask: the address (and its confirmation), the username, the display name, the password (and its confirmation). */
export const SIGNUP_FIELD_NAMES = ['email', 'email2', 'username', 'name', 'password1', 'password2'] as const;
export type SignupFieldName = (typeof SIGNUP_FIELD_NAMES)[number];

/** An entry of the setting: one of Latchkey's fields or a user field of the project's own (docs/user-fields.md), with a `*` when required. */
export const SIGNUP_FIELD_ENTRY = /^[a-z][a-z0-9_]{0,62}\*?$/;

export interface SignupField {
  /** One of SIGNUP_FIELD_NAMES, or the name of one of the project's user fields. */
  name: string;
  required: boolean;
}

export function isLatchkeySignupField(name: string): name is SignupFieldName {
  return (SIGNUP_FIELD_NAMES as readonly string[]).includes(name);
}

/** The fields of the setting, in its order. */
export function signupFieldsOf(setting: readonly string[]): SignupField[] {
  return setting.map((entry) => ({ name: entry.replace(/\*$/, ''), required: entry.endsWith('*') }));
}

/** Whether the signup asks the field, required or not. */
export function asksSignupField(setting: readonly string[], name: string): boolean {
  return setting.includes(name) || setting.includes(`${name}*`);
}

/**
 * Why the setting cannot name the project's fields as it does, or undefined: a name that is no
 * field, or a field the project declared required listed as optional (the signup would make
 * accounts without it).
 */
export function projectSignupFieldsProblem(setting: readonly string[], declared: readonly { name: string; required: boolean }[]): string | undefined {
  for (const field of signupFieldsOf(setting)) {
    if (isLatchkeySignupField(field.name)) continue;
    const own = declared.find((candidate) => candidate.name === field.name);
    if (own === undefined) {
      const known = [...SIGNUP_FIELD_NAMES, ...declared.map((candidate) => candidate.name)].join(', ');
      return `lists ${field.name}, which is no signup field: the fields are ${known} (the project's own are declared in src/users/fields.ts)`;
    }
    if (own.required && !field.required) return `lists ${field.name} as optional, but the project declares it required: list it as ${field.name}*`;
  }
  return undefined;
}

/**
 * Why this list cannot be the signup's, or undefined when it can. allauth's own refusals (a field
 * twice, an optional confirmation), and what Latchkey's accounts need: every account has an
 * address and a password at signup (a signup without a password is the passkey signup), so a
 * confirmation always has what it confirms, and a username exactly where the project has them.
 */
export function signupFieldsProblem(setting: readonly string[], usernameType: 'username' | 'email'): string | undefined {
  const fields = signupFieldsOf(setting);
  const seen = new Set<string>();
  for (const field of fields) {
    if (seen.has(field.name)) return `lists ${field.name} twice`;
    seen.add(field.name);
  }
  const field = (name: SignupFieldName) => fields.find((candidate) => candidate.name === name);
  if (field('email')?.required !== true) return 'must list email* (required): every account has an address';
  if (field('password1')?.required !== true) return 'must list password1* (required): a signup without a password is the passkey signup (MFA_PASSKEY_SIGNUP_ENABLED)';
  if (usernameType === 'username' && field('username')?.required !== true) return 'must list username* (required): this project\'s users have a username';
  if (usernameType === 'email' && field('username') !== undefined) return 'cannot list username: this project\'s users have no username';
  for (const confirmation of ['email2', 'password2'] as const) {
    const confirmed = field(confirmation);
    if (confirmed !== undefined && !confirmed.required) return `must mark ${confirmation} required (${confirmation}*) when it lists it: a confirmation left empty would confirm nothing`;
  }
  return undefined;
}

/** The project's fields the signup asks (ACCOUNT_SIGNUP_FIELDS), each with whether the signup requires it. */
export function signupUserFields(setting: readonly string[], userFields: readonly UserField[]): UserField[] {
  return signupFieldsOf(setting).flatMap((field) => {
    const declared = userFields.find((candidate) => candidate.name === field.name);
    return declared === undefined ? [] : [{ ...declared, required: declared.required || field.required }];
  });
}
