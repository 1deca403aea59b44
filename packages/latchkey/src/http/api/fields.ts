import { englishText, msg, type Message } from '../../core/i18n/message.js';
import { bodyObject, hasNul } from '../kit/input.js';

/**
 * Reading one text field of a request body as Django REST framework's CharField does, with its
 * messages, so that a client written against a DRF API sees the same field errors. A field is
 * read by name only: anything else in the body (`is_staff`, `user`, `userId`) is never looked at.
 */

export interface CharFieldOptions {
  /** Absent is an error ("This field is required."); default true. */
  required?: boolean;
  /** '' (after trimming, when trimmed) is accepted; default false. */
  allowBlank?: boolean;
  /** Leading and trailing whitespace removed (DRF's default; passwords keep theirs); default true. */
  trimWhitespace?: boolean;
  maxLength?: number;
}

/** What readCharField found: the value (undefined when absent and not required), or the error DRF would give, in English. */
export type CharFieldResult = { ok: true; value: string | undefined } | { ok: false; error: string };

/**
 * What checkCharField found: the error as a message, translated where the refusal is sent (in the
 * request's language, api/respond.ts), as DRF's lazy messages are. Latchkey's own views read
 * fields this way; readCharField gives projects the English text, as it always has.
 */
export type CharFieldCheck = { ok: true; value: string | undefined } | { ok: false; error: Message };

/** DRF's messages (rest_framework/fields.py, serializers.py), in its words and with its placeholders. */
const REQUIRED = msg('This field is required.');
const NULL = msg('This field may not be null.');
const NOT_A_STRING = msg('Not a valid string.');
const BLANK = msg('This field may not be blank.');
const NULL_CHARACTERS = msg('Null characters are not allowed.');

/** Any unpaired UTF-16 surrogate: not text at all, and no database stores it faithfully. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The field's text, `undefined` when it is absent and not required, or DRF's message for what is
 * wrong with it. A number is taken as its text, as DRF does; a boolean, an array or an object
 * (`{"$ne": ""}`) is "Not a valid string." and never reaches a flow.
 */
export function checkCharField(body: unknown, name: string, options: CharFieldOptions = {}): CharFieldCheck {
  const { required = true, allowBlank = false, trimWhitespace = true, maxLength } = options;
  const source = bodyObject(body);
  if (!Object.hasOwn(source, name) || source[name] === undefined) return required ? { ok: false, error: REQUIRED } : { ok: true, value: undefined };
  const raw = source[name];
  if (raw === null) return { ok: false, error: NULL };
  if (typeof raw !== 'string' && !(typeof raw === 'number' && Number.isFinite(raw))) return { ok: false, error: NOT_A_STRING };
  const text = String(raw);
  const value = trimWhitespace ? text.trim() : text;
  if (value === '') return allowBlank ? { ok: true, value } : { ok: false, error: BLANK };
  // Characters as Django counts them (code points): an emoji is one, not two UTF-16 units.
  if (maxLength !== undefined && [...value].length > maxLength) return { ok: false, error: msg('Ensure this field has no more than {max_length} characters.', { max_length: maxLength }) };
  if (hasNul(value)) return { ok: false, error: NULL_CHARACTERS };
  const surrogate = LONE_SURROGATE.exec(value);
  // DRF's `U+{code_point:X}`: the code point in upper-case hexadecimal, written here.
  if (surrogate) return { ok: false, error: msg('Surrogate characters are not allowed: U+{code_point}.', { code_point: surrogate[0].charCodeAt(0).toString(16).toUpperCase() }) };
  return { ok: true, value };
}

/**
 * The field's text, `undefined` when it is absent and not required, or DRF's message (in English)
 * for what is wrong with it: checkCharField, for a project's views. A message given back to
 * fieldErrors() is sent in the request's language where the catalogs have it.
 */
export function readCharField(body: unknown, name: string, options: CharFieldOptions = {}): CharFieldResult {
  const check = checkCharField(body, name, options);
  return check.ok ? check : { ok: false, error: englishText(check.error) };
}

/**
 * Reads several fields at once: their values, or every field's error together (DRF validates
 * all fields before answering, so a client learns of each missing one in a single 400).
 */
export function checkCharFields<const N extends string>(
  body: unknown,
  fields: Record<N, CharFieldOptions>,
): { ok: true; values: Record<N, string | undefined> } | { ok: false; errors: Record<string, Message[]> } {
  const values = {} as Record<N, string | undefined>;
  const errors: Record<string, Message[]> = {};
  for (const name of Object.keys(fields) as N[]) {
    const result = checkCharField(body, name, fields[name]);
    if (result.ok) values[name] = result.value;
    else errors[name] = [result.error];
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, values };
}

/** checkCharFields with the errors in English, for a project's views (readCharField). */
export function readCharFields<const N extends string>(
  body: unknown,
  fields: Record<N, CharFieldOptions>,
): { ok: true; values: Record<N, string | undefined> } | { ok: false; errors: Record<string, string[]> } {
  const read = checkCharFields(body, fields);
  if (read.ok) return read;
  const errors: Record<string, string[]> = {};
  for (const [name, messages] of Object.entries(read.errors)) errors[name] = messages.map(englishText);
  return { ok: false, errors };
}

/** Python's name for a JSON value's type, as DRF's "Expected a dictionary" message gives it. */
export function pythonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'NoneType';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return typeof value;
}

/**
 * The body as an object of fields (none sent reads as no fields), or DRF's message for a JSON
 * body that is a list, a string or a number (a serializer's non-field error).
 */
export function checkDictionary(body: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; error: Message } {
  if (body === undefined) return { ok: true, value: {} };
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) return { ok: true, value: body as Record<string, unknown> };
  return { ok: false, error: msg('Invalid data. Expected a dictionary, but got {datatype}.', { datatype: pythonTypeName(body) }) };
}

/** checkDictionary with the error in English, for a project's views (readCharField). */
export function expectDictionary(body: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  const check = checkDictionary(body);
  return check.ok ? check : { ok: false, error: englishText(check.error) };
}
