/**
 * The project's own user fields (docs/user-fields.md): declared once, in the project's
 * src/users/fields.ts, and read from that one declaration by every part that shows, takes or
 * stores a user: the column, the signup forms and APIs, the profile page, the admin, /api/users/me/
 * and the Django import. This module is the declaration and the rules of a value; each door draws
 * its own input from it.
 */
import { LatchkeyError } from './errors.js';
import { msg, nmsg, type Message } from './i18n/message.js';
import { tryNormalizeEmail } from './identifiers.js';

/** Every kind a user field may be (docs/user-fields.md). The text kinds hold a string ('' when empty), as Django's CharField does. */
export const USER_FIELD_TYPES = ['text', 'longtext', 'email', 'url', 'choice', 'integer', 'boolean', 'date'] as const;
/** One of USER_FIELD_TYPES. */
export type UserFieldType = (typeof USER_FIELD_TYPES)[number];

/** The value of each type in the project's code: a date is its ISO day ('1990-04-01'), never a Date (it has no time zone). */
export type UserFieldValueOf<Type extends UserFieldType> = Type extends 'integer' ? number | null : Type extends 'boolean' ? boolean : Type extends 'date' ? string | null : string;

/** A user field's value, whatever its kind. */
export type UserFieldValue = string | number | boolean | null;

/** Where staff meet the field in the admin; `false` keeps it out of the admin altogether. */
export interface UserFieldAdmin {
  /** Staff may change it on the user's page (default true); otherwise it is shown read-only. */
  edit?: boolean;
  /** A column of the users list. */
  list?: boolean;
  /** The list's search looks in it (text kinds only). */
  search?: boolean;
  /** A filter of the list (boolean and choice only). */
  filter?: boolean;
}

/** One field as the project declares it in defineUserFields (docs/user-fields.md, "Declaring a field"). */
export interface UserFieldDeclaration<Type extends UserFieldType = UserFieldType> {
  type: Type;
  /** The label of its form fields and admin column. */
  label: string;
  /** A line under its form fields. */
  help?: string;
  /** Wherever the field is asked, it must be given (a boolean: checked). Users made elsewhere (createsuperuser) may still lack it. */
  required?: boolean;
  /** Text kinds: the longest value; default 255 for text, email and url, none for longtext. */
  maxLength?: number;
  minLength?: number;
  /** integer: the bounds, inclusive. */
  min?: number;
  max?: number;
  /** choice: the stored values and their labels, in the form's order. */
  choices?: readonly (readonly [value: string, label: string])[];
  /** The project's own rule, run on a value that passed the others: a message refuses it. */
  check?: (value: UserFieldValueOf<Type>) => string | undefined | Promise<string | undefined>;
  /** Asked at signup unless ACCOUNT_SIGNUP_FIELDS says otherwise (as `name*` when required). */
  signup?: boolean;
  /** The person may change it: their profile page and PATCH /api/users/me/ (default true). */
  editable?: boolean;
  /** In the admin (default: on the user's page, editable). */
  admin?: UserFieldAdmin | false;
  /** Part of the user in the APIs: /api/users/me/ and the headless user object (default false). */
  api?: boolean;
  /** manage import-django: the Django users_user column it comes from, when named otherwise. */
  djangoColumn?: string;
}

/** A declared field, with its name and every default filled in. */
export interface UserField {
  readonly name: string;
  readonly type: UserFieldType;
  readonly label: string;
  readonly help: string;
  readonly required: boolean;
  readonly maxLength: number | undefined;
  readonly minLength: number | undefined;
  readonly min: number | undefined;
  readonly max: number | undefined;
  readonly choices: readonly (readonly [string, string])[];
  readonly check: ((value: never) => string | undefined | Promise<string | undefined>) | undefined;
  readonly signup: boolean;
  readonly editable: boolean;
  readonly admin: Required<UserFieldAdmin> | false;
  readonly api: boolean;
  readonly djangoColumn: string;
}

/** The project's fields, in declaration order: what createLatchkey({ userFields }) takes. */
export interface UserFieldSet<Types extends Record<string, UserFieldType> = Record<string, UserFieldType>> {
  readonly fields: readonly UserField[];
  /** What is wrong with the declaration, in one line, or undefined: start-up refuses it (checkUserFields). */
  readonly problem?: string;
  /** Only a type, never set: each field's type, which UserFieldValues reads. */
  readonly types?: Types;
}

/** The values a field set gives each user: `interface ProjectUserFields extends UserFieldValues<typeof userFields> {}`. */
export type UserFieldValues<Set> =
  Set extends UserFieldSet<infer Types> ? { [Name in keyof Types]: UserFieldValueOf<Types[Name]> } : never;

/**
 * The project's fields on every User (`request.user.company`). Empty here; a project that
 * declares fields adds them with `declare module '@latchkey/core'` (docs/user-fields.md).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into by the project's declaration
export interface ProjectUserFields {}

/** No field may take a name a user already has, in a column, a form or an answer. */
const RESERVED_NAMES = new Set([
  'id', 'username', 'username_key', 'email', 'email2', 'name', 'password', 'password1', 'password2', 'is_active', 'is_staff', 'is_superuser',
  'date_joined', 'last_login', 'next', 'csrfmiddlewaretoken', 'display', 'has_usable_password', 'key', 'token', 'phone', 'process', 'provider',
]);
const NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
const TEXT_KINDS: readonly UserFieldType[] = ['text', 'longtext', 'email', 'url', 'choice'];
const DEFAULT_MAX_LENGTH: Partial<Record<UserFieldType, number>> = { text: 255, email: 254, url: 2048 };

export function isTextKind(type: UserFieldType): boolean {
  return TEXT_KINDS.includes(type);
}

function declarationProblem(name: string, declaration: UserFieldDeclaration): string | undefined {
  if (!NAME_PATTERN.test(name)) return 'a name must be lower case letters, digits and _, starting with a letter';
  if (RESERVED_NAMES.has(name)) return 'the name is one a user already has';
  if (!USER_FIELD_TYPES.includes(declaration.type)) return `type must be one of ${USER_FIELD_TYPES.join(', ')}`;
  if (typeof declaration.label !== 'string' || declaration.label.trim() === '') return 'it needs a label';
  if (declaration.type === 'choice' && (declaration.choices === undefined || declaration.choices.length === 0)) return 'a choice field needs choices';
  if (declaration.type !== 'choice' && declaration.choices !== undefined) return 'only a choice field has choices';
  const lengths = declaration.maxLength !== undefined || declaration.minLength !== undefined;
  if (lengths && !['text', 'longtext', 'email', 'url'].includes(declaration.type)) return 'only the text kinds have a length';
  if ((declaration.min !== undefined || declaration.max !== undefined) && declaration.type !== 'integer') return 'only an integer has min and max';
  const admin = declaration.admin === false ? undefined : declaration.admin;
  if (admin?.search === true && !isTextKind(declaration.type)) return 'the admin searches text kinds only';
  if (admin?.filter === true && declaration.type !== 'boolean' && declaration.type !== 'choice') return 'the admin filters boolean and choice fields only';
  if (declaration.djangoColumn !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(declaration.djangoColumn)) return 'djangoColumn must be a column name';
  return undefined;
}

/**
 * The project's user fields, checked once: a mistake (a reserved name, a choice field without
 * choices) stops the project at start-up with the field's name, not at its first signup. It is
 * kept, not thrown: this runs as src/users/fields.ts is imported, where a throw would end the
 * process with a stack trace instead of start-up's one line (checkUserFields).
 */
export function defineUserFields<const Types extends Record<string, UserFieldType> = Record<never, never>>(declarations: { [Name in keyof Types]: UserFieldDeclaration<Types[Name]> }): UserFieldSet<Types> {
  const problems: string[] = [];
  const fields = Object.entries(declarations as Record<string, UserFieldDeclaration>).flatMap(([name, declaration]): UserField[] => {
    const problem = declarationProblem(name, declaration);
    if (problem !== undefined) {
      problems.push(`User field '${name}': ${problem} (docs/user-fields.md).`);
      return [];
    }
    return [Object.freeze({
      name,
      type: declaration.type,
      label: declaration.label,
      help: declaration.help ?? '',
      required: declaration.required ?? false,
      maxLength: declaration.maxLength ?? DEFAULT_MAX_LENGTH[declaration.type],
      minLength: declaration.minLength,
      min: declaration.min,
      max: declaration.max,
      choices: declaration.choices ?? [],
      check: declaration.check,
      signup: declaration.signup ?? false,
      editable: declaration.editable ?? true,
      admin: declaration.admin === false ? false : { edit: true, list: false, search: false, filter: false, ...declaration.admin },
      api: declaration.api ?? false,
      djangoColumn: declaration.djangoColumn ?? name,
    })];
  });
  return Object.freeze({ fields: Object.freeze(fields), ...(problems.length === 0 ? {} : { problem: problems[0] }) });
}

/** Start-up's check of the declaration: its first mistake, as a LatchkeyError of one line. */
export function checkUserFields(set: UserFieldSet): void {
  if (set.problem !== undefined) throw new LatchkeyError('configuration_invalid', set.problem);
}

/** A project without fields of its own. */
export const NO_USER_FIELDS: UserFieldSet = Object.freeze({ fields: Object.freeze([]) });

/** What a user has in the field before anyone gave it a value. */
export function emptyUserFieldValue(field: Pick<UserField, 'type'>): UserFieldValue {
  if (field.type === 'boolean') return false;
  if (field.type === 'integer' || field.type === 'date') return null;
  return '';
}

export function isEmptyUserFieldValue(value: UserFieldValue): boolean {
  return value === null || value === '';
}

function refuse(field: UserField, message: string | Message, reason = 'invalid'): LatchkeyError {
  return new LatchkeyError('invalid_input', message, { param: field.name, reason });
}

/** A calendar day 'YYYY-MM-DD' that exists (not 2023-02-30). */
export function isIsoDay(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const day = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text;
}

function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** The value as sent, before its rules: a form's string or a JSON value; undefined, null and '' are empty. */
function typedValue(field: UserField, raw: unknown): UserFieldValue {
  if (raw === undefined || raw === null) return emptyUserFieldValue(field);
  switch (field.type) {
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      // A checkbox sends "on" when checked and nothing when not; a JSON client may send the words.
      if (raw === 'on' || raw === 'true' || raw === '1') return true;
      if (raw === '' || raw === 'false' || raw === '0') return false;
      throw refuse(field, msg('Must be a valid boolean.'));
    case 'integer': {
      if (raw === '') return null;
      const number = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isSafeInteger(number)) throw refuse(field, msg('Enter a whole number.'));
      return number;
    }
    case 'date': {
      if (typeof raw !== 'string') throw refuse(field, msg('Enter a valid date.'));
      const text = raw.trim();
      if (text === '') return null;
      if (!isIsoDay(text)) throw refuse(field, msg('Enter a valid date.'));
      return text;
    }
    default:
      if (typeof raw !== 'string') throw refuse(field, msg('Not a valid string.'));
      if (raw.includes('\0')) throw refuse(field, msg('Null characters are not allowed.'));
      // As Django's CharField: surrounding spaces are not part of the value.
      return raw.trim();
  }
}

/** What a value of the field's type breaks among the declaration's rules (length, choices, bounds, address forms), or undefined; never the project's `check`. */
export function ruleProblem(field: UserField, value: UserFieldValue): Message | undefined {
  if (typeof value === 'string' && field.type !== 'date') {
    const length = [...value].length;
    const { maxLength: max, minLength: min } = field;
    if (max !== undefined && length > max) return nmsg('Ensure this value has at most {max} character (it has {length}).', 'Ensure this value has at most {max} characters (it has {length}).', max, { max, length });
    if (min !== undefined && length < min) return nmsg('Ensure this value has at least {min} character (it has {length}).', 'Ensure this value has at least {min} characters (it has {length}).', min, { min, length });
    if (field.type === 'email' && tryNormalizeEmail(value) === undefined) return msg('Enter a valid email address.');
    if (field.type === 'url' && !isWebUrl(value)) return msg('Enter a valid URL.');
    if (field.type === 'choice' && !field.choices.some(([choice]) => choice === value)) return msg('Select a valid choice. {value} is not one of the available choices.', { value });
  }
  if (typeof value === 'number') {
    if (field.min !== undefined && value < field.min) return msg('Ensure this value is greater than or equal to {min}.', { min: field.min });
    if (field.max !== undefined && value > field.max) return msg('Ensure this value is less than or equal to {max}.', { max: field.max });
  }
  return undefined;
}

/**
 * The value a person gave the field, checked by its every rule, or a LatchkeyError naming the
 * field (`param`): the form's string, or the JSON value of an API. Empty is '' (text kinds),
 * null (integer, date) or false (boolean); a required field refuses it.
 */
export async function parseUserFieldInput(field: UserField, raw: unknown): Promise<UserFieldValue> {
  const value = typedValue(field, raw);
  const empty = isEmptyUserFieldValue(value) || (field.type === 'boolean' && value === false);
  if (empty) {
    if (field.required) throw refuse(field, msg('This field is required.'), 'required');
    return value;
  }
  const problem = ruleProblem(field, value);
  if (problem !== undefined) throw refuse(field, problem);
  const own = await field.check?.(value as never);
  if (own !== undefined) throw refuse(field, own);
  return value;
}

/** The value as a form's input holds it: '' for none, the day, the number's digits; a boolean's checkbox reads `value === true`. */
export function formValueOf(value: UserFieldValue): string {
  return value === null || typeof value === 'boolean' ? '' : String(value);
}

/** The field's value on a user, typed or not: what the field holds before a value was given, when the user has none. */
export function userFieldValueOf(user: object, field: Pick<UserField, 'name' | 'type'>): UserFieldValue {
  const value = (user as Record<string, unknown>)[field.name];
  return value === undefined ? emptyUserFieldValue(field) : (value as UserFieldValue);
}

/**
 * A field's value as JSON Schema describes it, for the route declarations of the APIs: its type
 * only, so that a value of the right type is judged by the field's rules, beside every other field.
 */
export function userFieldJsonSchema(field: UserField): Record<string, unknown> {
  const described = { description: field.help === '' ? field.label : `${field.label}: ${field.help}` };
  switch (field.type) {
    case 'boolean':
      return { type: 'boolean', ...described };
    case 'integer':
      return { type: ['integer', 'null'], ...described };
    case 'date':
      return { type: ['string', 'null'], format: 'date', ...described };
    case 'choice':
      // The choices are said, not declared as an enum: a value outside them is the field's own
      // refusal ("Select a valid choice."), given with every other field's.
      return { type: 'string', description: `${described.description} One of: ${field.choices.map(([value]) => value).join(', ')}; '' for none.` };
    default:
      return { type: 'string', ...described };
  }
}
