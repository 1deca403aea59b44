/**
 * The project's user fields (core/user-fields.ts) as form inputs: what account/_form.html's
 * `user_field` macro draws for each type, and what a submitted form gave each field. Shared by
 * every page that asks them: the signup pages, the social signup form, the admin and the
 * project's own profile page (through latchkey.userFields).
 */
import { formValueOf, userFieldValueOf, type UserField } from '../../core/user-fields.js';

/** One project field as account/_form.html's `user_field` macro draws it. */
export interface UserFieldInput {
  name: string;
  label: string;
  help: string;
  required: boolean;
  /** The element: an input, a textarea (longtext), a select (choice) or a checkbox (boolean). */
  widget: 'input' | 'textarea' | 'select' | 'checkbox';
  /** For an input: its HTML type. */
  type: 'text' | 'email' | 'url' | 'number' | 'date';
  choices: readonly { value: string; label: string }[];
  maxlength: number | undefined;
  min: number | undefined;
  max: number | undefined;
}

const INPUT_TYPES: Record<string, UserFieldInput['type']> = { email: 'email', url: 'url', integer: 'number', date: 'date' };

/** The field's input; `required` says whether this form requires it (a signup's `*` may, where the field alone does not). */
export function userFieldInput(field: UserField, required = field.required): UserFieldInput {
  const widget = field.type === 'longtext' ? 'textarea' : field.type === 'choice' ? 'select' : field.type === 'boolean' ? 'checkbox' : 'input';
  return {
    name: field.name,
    label: field.label,
    help: field.help,
    required,
    widget,
    type: INPUT_TYPES[field.type] ?? 'text',
    choices: field.choices.map(([value, label]) => ({ value, label })),
    maxlength: field.maxLength,
    min: field.min,
    max: field.max,
  };
}

/**
 * What a submitted form gave each field, as sent: its text, or for a checkbox whether it was
 * checked (an unchecked box sends nothing, so absent is false). A field sent twice is kept as
 * sent, for its rules to refuse. Nothing is judged here.
 */
export function userFieldsFromForm(fields: readonly UserField[], body: unknown): Record<string, unknown> {
  const sent = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  return Object.fromEntries(fields.map((field) => [field.name, field.type === 'boolean' ? sent[field.name] ?? false : sent[field.name] ?? '']));
}

/** A form's values for the fields: what the user holds, as its inputs show it ('on' for a checked box). */
export function userFieldFormValues(fields: readonly UserField[], user: object): Record<string, string> {
  return Object.fromEntries(fields.map((field) => [field.name, formValueOfField(field, userFieldValueOf(user, field))]));
}

/** A value as a field's input shows it again, whether it came from the user or from what was typed. */
export function formValueOfField(field: Pick<UserField, 'type'>, value: unknown): string {
  if (field.type === 'boolean') return value === true || value === 'on' || value === 'true' ? 'on' : '';
  if (typeof value === 'string') return value;
  // Nothing given (a provider that knows nothing of the field), or a value of the wrong kind: an empty input.
  return typeof value === 'number' ? formValueOf(value) : '';
}
