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

/** What readCharField found: the value (undefined when absent and not required), or the error DRF would give. */
export type CharFieldResult = { ok: true; value: string | undefined } | { ok: false; error: string };

/** Any unpaired UTF-16 surrogate: not text at all, and no database stores it faithfully. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The field's text, `undefined` when it is absent and not required, or DRF's message for what is
 * wrong with it. A number is taken as its text, as DRF does; a boolean, an array or an object
 * (`{"$ne": ""}`) is "Not a valid string." and never reaches a flow.
 */
export function readCharField(body: unknown, name: string, options: CharFieldOptions = {}): CharFieldResult {
  const { required = true, allowBlank = false, trimWhitespace = true, maxLength } = options;
  const source = bodyObject(body);
  if (!Object.hasOwn(source, name) || source[name] === undefined) return required ? { ok: false, error: 'This field is required.' } : { ok: true, value: undefined };
  const raw = source[name];
  if (raw === null) return { ok: false, error: 'This field may not be null.' };
  if (typeof raw !== 'string' && !(typeof raw === 'number' && Number.isFinite(raw))) return { ok: false, error: 'Not a valid string.' };
  const text = String(raw);
  const value = trimWhitespace ? text.trim() : text;
  if (value === '') return allowBlank ? { ok: true, value } : { ok: false, error: 'This field may not be blank.' };
  // Characters as Django counts them (code points): an emoji is one, not two UTF-16 units.
  if (maxLength !== undefined && [...value].length > maxLength) return { ok: false, error: `Ensure this field has no more than ${maxLength} characters.` };
  if (hasNul(value)) return { ok: false, error: 'Null characters are not allowed.' };
  const surrogate = LONE_SURROGATE.exec(value);
  if (surrogate) return { ok: false, error: `Surrogate characters are not allowed: U+${surrogate[0].charCodeAt(0).toString(16).toUpperCase()}.` };
  return { ok: true, value };
}

/**
 * Reads several fields at once: their values, or every field's error together (DRF validates
 * all fields before answering, so a client learns of each missing one in a single 400).
 */
export function readCharFields<const N extends string>(
  body: unknown,
  fields: Record<N, CharFieldOptions>,
): { ok: true; values: Record<N, string | undefined> } | { ok: false; errors: Record<string, string[]> } {
  const values = {} as Record<N, string | undefined>;
  const errors: Record<string, string[]> = {};
  for (const name of Object.keys(fields) as N[]) {
    const result = readCharField(body, name, fields[name]);
    if (result.ok) values[name] = result.value;
    else errors[name] = [result.error];
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, values };
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
export function expectDictionary(body: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (body === undefined) return { ok: true, value: {} };
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) return { ok: true, value: body as Record<string, unknown> };
  return { ok: false, error: `Invalid data. Expected a dictionary, but got ${pythonTypeName(body)}.` };
}
