import { isLatchkeySignupField, SIGNUP_FIELD_NAMES, signupFieldsOf, type SignupFieldName } from '../../config/signup-fields.js';
import type { UserField } from '../../core/user-fields.js';
import { msg, type Message } from '../../core/i18n/message.js';
import { userFieldInput, type UserFieldInput } from './user-field-form.js';
import type { Settings } from '../../config/settings.js';
import { CSRF_FORM_FIELD } from './csrf.js';
import { bodyObject, hasNul } from './input.js';

/**
 * What a person sent to sign up, as the adapter's saveUser reads it (SignupSubmission.fields):
 * every field of the form or JSON body as sent, so that a field a project added to its signup
 * template reaches its hook, but never a password (any field whose name holds "password") nor
 * the CSRF token, which the hook has no business seeing. A shallow, frozen copy: the hook cannot
 * change what the door itself reads.
 */
export function submittedFields(body: unknown): Readonly<Record<string, unknown>> {
  const kept = Object.entries(bodyObject(body)).filter(([name]) => !/password/i.test(name) && name !== CSRF_FORM_FIELD);
  return Object.freeze(Object.fromEntries(kept));
}

/**
 * What a refused signup form shows again: the text fields submittedFields keeps (a project's own
 * among them, for its template), never a password; the page sets its own fields over them.
 */
export function typedAgain(body: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(submittedFields(body)).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && !hasNul(entry[1])));
}

/** One of Latchkey's fields of a signup form, as account/_form.html's `field` macro draws it. */
export interface LatchkeySignupFormField {
  name: SignupFieldName;
  /** A message, which the template translates (`_(f.label)`) before handing it to the macro. */
  label: Message;
  type: 'email' | 'text' | 'password';
  autocomplete: string;
  required: boolean;
  own: false;
}

/** A field of a signup form: Latchkey's, or one of the project's (`own`, drawn by the `user_field` macro). */
export type SignupFormField = LatchkeySignupFormField | (UserFieldInput & { own: true });

const FORM_FIELDS: Record<SignupFieldName, Omit<LatchkeySignupFormField, 'name' | 'required' | 'own'>> = {
  email: { label: msg('Email'), type: 'email', autocomplete: 'email' },
  email2: { label: msg('Email (again)'), type: 'email', autocomplete: 'email' },
  username: { label: msg('Username'), type: 'text', autocomplete: 'username' },
  name: { label: msg('Name'), type: 'text', autocomplete: 'name' },
  password1: { label: msg('Password'), type: 'password', autocomplete: 'new-password' },
  password2: { label: msg('Password (again)'), type: 'password', autocomplete: 'new-password' },
};

/** The names a signup page reads from its body: every field a signup can ask, and `next`. */
export const SIGNUP_FORM_NAMES = [...SIGNUP_FIELD_NAMES, 'next'] as const;

/**
 * The signup form's fields in ACCOUNT_SIGNUP_FIELDS' order, for signup.html: Latchkey's and the
 * project's own; without the passwords for the passkey signup, which asks none.
 */
export function signupFormFields(settings: Pick<Settings, 'ACCOUNT_SIGNUP_FIELDS'>, userFields: readonly UserField[], options: { passwords: boolean }): SignupFormField[] {
  return signupFieldsOf(settings.ACCOUNT_SIGNUP_FIELDS)
    .filter((field) => options.passwords || !field.name.startsWith('password'))
    .flatMap((field): SignupFormField[] => {
      if (isLatchkeySignupField(field.name)) return [{ name: field.name, ...FORM_FIELDS[field.name], required: field.required, own: false }];
      const declared = userFields.find((candidate) => candidate.name === field.name);
      // Start-up refuses a name that is no field, so none is missing here.
      return declared === undefined ? [] : [{ ...userFieldInput(declared, field.required), own: true }];
    });
}
