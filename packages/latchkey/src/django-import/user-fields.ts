/**
 * The project's own user fields (docs/user-fields.md) carried over from users_user: each declared
 * field's column (its `djangoColumn`) made into the field's value, or the reason it does not fit
 * the field. A value is never changed to make it fit (not trimmed, not cut, not emptied): a value
 * that does not fit stops the import, which writes nothing, and every such value is named, so that
 * the declaration (or the Django data) can be put right before a run that imports everyone
 * (docs/migrating-from-django.md#your-own-user-fields).
 *
 * The import holds a value to what the field can store: its type and the declaration's rules
 * (maxLength, choices, min and max, an address's form). It does not hold it to `required`, which
 * binds where a form asks the field, as for a user made by createsuperuser; nor run the project's
 * `check`, which judges what a person enters now: values already stored are not judged again, as
 * the passwords the import carries are not held to the password validators.
 */
import { docsPage } from '../core/docs-page.js';
import { emptyUserFieldValue, isIsoDay, ruleProblem, type UserField, type UserFieldValue } from '../core/user-fields.js';
import { englishText } from '../core/i18n/message.js';
import type { DjangoUser, DjangoUserColumns } from './model.js';

/** One value of users_user that does not fit its field. */
export interface UnfitValue {
  userId: number;
  field: string;
  column: string;
  problem: string;
}

export type ConvertedUserFields = { values: Record<string, UserFieldValue> } | { unfit: UnfitValue[] };

/** The users_user columns a source must read for these fields (DjangoUser.projectColumns). */
export function djangoColumnsOf(fields: readonly UserField[]): string[] {
  return [...new Set(fields.map((field) => field.djangoColumn))];
}

/** A value as a message shows it: JSON, cut short. A field's value is the person's profile, never a secret (the password column is refused). */
function shown(raw: unknown): string {
  const json = JSON.stringify(raw) ?? String(raw);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

/**
 * The column's value (as Django's dumpdata writes it: model.ts) as the field's: null is the
 * field's empty value, as a Django column that allows NULL means "none" ('' for the text kinds,
 * null for an integer or a day, false for a boolean).
 */
function fieldValue(field: UserField, raw: unknown): { value: UserFieldValue } | { problem: string } {
  if (raw === undefined || raw === null) return { value: emptyUserFieldValue(field) };
  let value: UserFieldValue;
  switch (field.type) {
    case 'boolean':
      if (typeof raw !== 'boolean') return { problem: `${shown(raw)} is not true or false.` };
      return { value: raw };
    case 'integer':
      if (typeof raw !== 'number' || !Number.isSafeInteger(raw)) return { problem: `${shown(raw)} is not a whole number.` };
      value = raw;
      break;
    case 'date':
      if (typeof raw !== 'string' || !isIsoDay(raw)) return { problem: `${shown(raw)} is not a day (YYYY-MM-DD).` };
      return { value: raw };
    default:
      if (typeof raw !== 'string') return { problem: `${shown(raw)} is not text.` };
      // PostgreSQL cannot store one; a SQLite database can hold it.
      if (raw.includes('\0')) return { problem: 'Null characters are not allowed.' };
      // Blank is the empty value, which every rule lets through, as on a form.
      if (raw === '') return { value: raw };
      value = raw;
  }
  // The import's report is for the operator, in English (as the CLI).
  const problem = ruleProblem(field, value);
  return problem === undefined ? { value } : { problem: englishText(problem) };
}

/** The user's value of every declared field, from the columns the source read; a column users_user lacks gives the empty value. */
export function convertUserFields(fields: readonly UserField[], user: DjangoUser): ConvertedUserFields {
  const values: Record<string, UserFieldValue> = {};
  const unfit: UnfitValue[] = [];
  for (const field of fields) {
    const converted = fieldValue(field, user.projectColumns[field.djangoColumn]);
    if ('value' in converted) values[field.name] = converted.value;
    else unfit.push({ userId: user.id, field: field.name, column: field.djangoColumn, problem: converted.problem });
  }
  return unfit.length === 0 ? { values } : { unfit };
}

/**
 * Why these fields cannot be read from this source, before a row is read, or undefined: a field
 * whose column holds the password hash, which no field may show; or a source not opened to read a
 * field's column (openDjangoDatabase's and openDjangoDumpdata's projectColumns), whose users
 * would all get the empty value unsaid.
 */
export function userFieldColumnsProblem(fields: readonly UserField[], columns: DjangoUserColumns): string | undefined {
  const fromPassword = fields.find((field) => field.djangoColumn === 'password');
  if (fromPassword !== undefined) {
    return `The user field '${fromPassword.name}' comes from users_user.password, the password hash, which no field may hold: give it another djangoColumn (${docsPage('user-fields.md')}).`;
  }
  const read = new Set([...columns.project, ...columns.absent]);
  const unread = djangoColumnsOf(fields).filter((column) => !read.has(column));
  if (unread.length > 0) return `The Django source was opened without the column(s) ${unread.join(', ')} of the project's user fields: open it with projectColumns (djangoColumnsOf(userFields)).`;
  return undefined;
}

/** How an unfit value is named: its row and column, and the field when it has another name. */
export function describeUnfitValue(unfit: UnfitValue): string {
  const field = unfit.field === unfit.column ? '' : ` (field ${unfit.field})`;
  return `users_user ${unfit.userId}.${unfit.column}${field}: ${unfit.problem}`;
}
