/**
 * The project's own user fields (docs/user-fields.md) as the admin shows them (docs/admin.md):
 * a value as text for the list's columns and the user's read-only facts, and the list's filters
 * on them, in the URL style of its staff and active filters (`?newsletter=1`, `?plan=team`).
 */
import { msg, type Message } from '../../core/i18n/message.js';
import { isTextKind, userFieldValueOf, type UserField, type UserFieldValue } from '../../core/user-fields.js';
import { ALL_CHOICE, flag, withQuery, yesNoFilter, type FilterChoice } from './list-query.js';

/** Django admin's empty_value_display: what a column or a read-only field shows for no value. */
export const EMPTY_VALUE_DISPLAY = '-';

/**
 * A text the project declared for one of its fields (its label, help, a choice's label) as a
 * message: the template's `_()` looks it up in the catalogs, the project's own among them, as the
 * account pages' user_field macro does. Not marked with msg(): Latchkey's catalogs do not hold it.
 */
export function declaredText(text: string): Message {
  return { id: text };
}

/**
 * A value as staff read it: a boolean as the list's other flags (Yes/No), a choice by its label, a
 * date as its day. A message (msg(), or a declared label) is translated by the template; a string
 * is the value itself, shown as it is.
 */
export function adminTextOf(field: UserField, value: UserFieldValue): Message | string {
  if (field.type === 'boolean') return value === true ? msg('Yes') : msg('No');
  if (value === null || value === '') return EMPTY_VALUE_DISPLAY;
  // A value stored before its choice was dropped from the declaration is shown as stored, not hidden.
  if (field.type === 'choice') {
    const label = field.choices.find(([stored]) => stored === value)?.[1];
    return label === undefined ? String(value) : declaredText(label);
  }
  return String(value);
}

/** A field on a user's page as a fact: its label, its help ('' for none) and its value's text. */
export function adminFactOf(field: UserField, user: object): { name: string; label: Message; help: Message | ''; text: Message | string } {
  return { name: field.name, label: declaredText(field.label), help: field.help === '' ? '' : declaredText(field.help), text: adminTextOf(field, userFieldValueOf(user, field)) };
}

/** The columns of the users list: the fields declared `admin: { list: true }`, in declaration order. */
export function listedUserFields(fields: readonly UserField[]): UserField[] {
  return fields.filter((field) => field.admin !== false && field.admin.list);
}

/** The fields the list's search looks in (storage/kysely/user-search.ts reads the same declaration). */
export function searchedUserFields(fields: readonly UserField[]): UserField[] {
  return fields.filter((field) => field.admin !== false && field.admin.search && isTextKind(field.type));
}

/** The list's filters: the booleans and choices declared `admin: { filter: true }`. */
export function filteredUserFields(fields: readonly UserField[]): UserField[] {
  return fields.filter((field) => field.admin !== false && field.admin.filter && (field.type === 'boolean' || field.type === 'choice'));
}

/** The list's own parameters, which a field's filter must not take over. */
const LIST_PARAMETERS = new Set(['q', 'o', 'after']);

/**
 * The query parameter of a field's filter: its name, as `is_staff` is the staff filter's; Django's
 * `name__exact` for a field whose name is one of the list's own parameters (a field called `q`).
 */
export function filterParameterOf(field: UserField): string {
  return LIST_PARAMETERS.has(field.name) ? `${field.name}__exact` : field.name;
}

/** The value a filter's parameter holds, when it is one the field can hold: '1' or '0' for a boolean, a choice's stored value. */
function filterValueOf(field: UserField, text: string): string | boolean | undefined {
  if (field.type === 'boolean') return flag(text);
  return field.choices.some(([stored]) => stored === text) ? text : undefined;
}

/**
 * The filters the query string sets: each as the list's links carry it (anything else is no
 * filter, as with is_staff), and as the users search takes it (UserSearch.userFields).
 */
export function readUserFieldFilters(fields: readonly UserField[], text: (name: string) => string): { query: Record<string, string>; search: Record<string, string | boolean> } {
  const query: Record<string, string> = {};
  const search: Record<string, string | boolean> = {};
  for (const field of filteredUserFields(fields)) {
    const parameter = filterParameterOf(field);
    const value = filterValueOf(field, text(parameter));
    query[parameter] = value === undefined ? '' : text(parameter);
    if (value !== undefined) search[field.name] = value;
  }
  return { query, search };
}

/** A field's filter links: All / Yes / No for a boolean, All and each choice by its label for a choice. */
export function userFieldFilter(listPath: string, query: Record<string, string>, field: UserField): { name: string; label: Message; choices: FilterChoice[] } {
  const parameter = filterParameterOf(field);
  if (field.type === 'boolean') return yesNoFilter(listPath, query, parameter, declaredText(field.label));
  const choice = (label: Message, value: string | undefined) => ({ label, url: `${listPath}${withQuery(query, { [parameter]: value })}`, selected: query[parameter] === (value ?? '') });
  return { name: parameter, label: declaredText(field.label), choices: [choice(ALL_CHOICE, undefined), ...field.choices.map(([value, label]) => choice(declaredText(label), value))] };
}
