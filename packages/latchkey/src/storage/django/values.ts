/**
 * Django's column values, made plain, whichever source they came from: SQLite (booleans as 0/1,
 * instants as UTC text, JSON as text), PostgreSQL (bigint ids as text, timestamptz read as text,
 * jsonb already parsed, allauth 0.51's extra_data as text) or a dumpdata file (ISO instants with or
 * without 'Z', JSON either inline or as a string in older allauth). A value that is none of these
 * is an error that names the table, the row and the column, so an operator can find it.
 */
import { LatchkeyError } from '../../core/errors.js';

/** One row as read: values keyed by Django column name (`user_id`, not `user`). */
export type DjangoRecord = Readonly<Record<string, unknown>>;

/**
 * 'YYYY-MM-DD HH:MM[:SS[.fraction]]' with 'T' or a space, then 'Z', an offset (+00, +0000, +00:00)
 * or nothing. Nothing means UTC: with USE_TZ=True Django writes UTC to SQLite without an offset.
 */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Minutes east of UTC of an offset written '+05', '-0330' or '+05:30'; 0 for 'Z' or none. */
function offsetMinutes(offset: string | undefined): number {
  if (offset === undefined || offset.toUpperCase() === 'Z') return 0;
  const digits = offset.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
  return offset.startsWith('-') ? -minutes : minutes;
}

/** A Django instant as a Date (to the millisecond: JavaScript's precision, microseconds cut off), or undefined when it is not one. */
export function parseDjangoInstant(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value !== 'string') return undefined;
  const match = INSTANT.exec(value.trim());
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second = '0', fraction = '', offset] = match;
  const milliseconds = Number(fraction.padEnd(3, '0').slice(0, 3));
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), milliseconds);
  const date = new Date(utc - offsetMinutes(offset) * 60_000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A JSON column's value as an object: parsed when it is text, {} when it is empty (older allauth's blank JSONField). */
export function parseJsonObject(value: unknown): Record<string, unknown> | undefined {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return {};
    try {
      parsed = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (parsed === null || parsed === undefined) return {};
  return typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}

/** Columns whose values a message never shows: hashes, keys, client secrets, tokens, MFA secrets. */
const SECRET_COLUMNS = new Set(['password', 'key', 'secret', 'token', 'token_secret', 'data']);

/** Reads one record's columns, refusing values of the wrong kind with the table, the row and the column. */
export class RecordReader {
  constructor(
    private readonly table: string,
    private readonly record: DjangoRecord,
    /** The column that identifies the row in messages. */
    private readonly keyColumn = 'id',
  ) {}

  private invalid(column: string, expected: string): LatchkeyError {
    const key = this.record[this.keyColumn];
    const row = typeof key === 'string' || typeof key === 'number' || typeof key === 'bigint' ? ` ${String(key)}` : '';
    const value = this.record[column];
    const shown = SECRET_COLUMNS.has(column) && value !== undefined && value !== null ? `a ${typeof value}` : (JSON.stringify(value) ?? 'nothing').slice(0, 60);
    return new LatchkeyError('invalid_input', `${this.table}${row}: ${column} is ${shown}, not ${expected}.`);
  }

  /** Whether the source has the column at all (a database's optional columns, a dump's optional fields). */
  has(column: string): boolean {
    return this.record[column] !== undefined;
  }

  /** An integer id: a number, or the text PostgreSQL gives for bigint. */
  id(column: string): number {
    const value = this.record[column];
    const id = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : typeof value === 'bigint' ? Number(value) : value;
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw this.invalid(column, 'an integer id');
    return id;
  }

  optionalId(column: string): number | null {
    return this.record[column] === null || this.record[column] === undefined ? null : this.id(column);
  }

  text(column: string): string {
    const value = this.record[column];
    if (typeof value !== 'string') throw this.invalid(column, 'text');
    return value;
  }

  /** Text that may be missing or null (a column older versions lack): null then. */
  optionalText(column: string): string | null {
    const value = this.record[column];
    return value === null || value === undefined ? null : this.text(column);
  }

  /** true/false, or SQLite's 1/0. */
  boolean(column: string): boolean {
    const value = this.record[column];
    if (value === true || value === 1 || value === 1n) return true;
    if (value === false || value === 0 || value === 0n) return false;
    throw this.invalid(column, 'true or false');
  }

  instant(column: string): Date {
    const date = parseDjangoInstant(this.record[column]);
    if (date === undefined) throw this.invalid(column, 'a date and time');
    return date;
  }

  optionalInstant(column: string): Date | null {
    const value = this.record[column];
    return value === null || value === undefined ? null : this.instant(column);
  }

  /** A JSON column's object; {} when the column is missing (older versions). */
  json(column: string): Record<string, unknown> {
    const parsed = parseJsonObject(this.record[column]);
    if (parsed === undefined) throw this.invalid(column, 'a JSON object');
    return parsed;
  }
}
