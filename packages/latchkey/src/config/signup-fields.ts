/**
 * ACCOUNT_SIGNUP_FIELDS, with allauth 65's meaning: the fields the signup asks, in the form's
 * order, a trailing `*` marking one required. Read here once, for the settings' checks, the signup
 * flow and the pages.
 */

/** The fields a signup can ask: the address (and its confirmation), the username, the display name, the password (and its confirmation). */
export const SIGNUP_FIELD_NAMES = ['email', 'email2', 'username', 'name', 'password1', 'password2'] as const;
export type SignupFieldName = (typeof SIGNUP_FIELD_NAMES)[number];

/** The setting's values: each field, plain or required. */
export const SIGNUP_FIELD_CHOICES = SIGNUP_FIELD_NAMES.flatMap((name) => [name, `${name}*`] as const) as unknown as readonly [string, ...string[]];

export interface SignupField {
  name: SignupFieldName;
  required: boolean;
}

/** The fields of the setting, in its order. */
export function signupFieldsOf(setting: readonly string[]): SignupField[] {
  return setting.map((entry) => ({ name: entry.replace(/\*$/, '') as SignupFieldName, required: entry.endsWith('*') }));
}

/** Whether the signup asks the field, required or not. */
export function asksSignupField(setting: readonly string[], name: SignupFieldName): boolean {
  return setting.includes(name) || setting.includes(`${name}*`);
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
