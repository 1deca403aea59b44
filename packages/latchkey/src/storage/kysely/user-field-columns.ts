/**
 * The project's user fields (core/user-fields.ts) as columns of latchkey_users, which the
 * project's own migration adds (`manage makemigration` writes it from the declaration). Each
 * type's column and how its value goes in and comes out, alike on SQLite and PostgreSQL.
 */
import type { UsernameType } from '../../config/settings.js';
import type { UserField, UserFieldType, UserFieldValue } from '../../core/user-fields.js';


/** Who the users are: how they sign in, and the project's fields beside Latchkey's columns. */
export interface UserShape {
  usernameType: UsernameType;
  userFields: readonly UserField[];
}

/**
 * The column each type is stored in. The text kinds and booleans are never null (empty is '' and
 * false, as Django stores them); a number or a day may be absent. PostgreSQL keeps a day as a
 * date, SQLite as its ISO text.
 */
export function userFieldColumnType(type: UserFieldType, dialect: 'sqlite' | 'postgres'): { sql: string; notNull: boolean; default: string | undefined } {
  switch (type) {
    case 'boolean':
      return { sql: 'boolean', notNull: true, default: 'false' };
    case 'integer':
      return { sql: 'integer', notNull: false, default: undefined };
    case 'date':
      return { sql: dialect === 'postgres' ? 'date' : 'text', notNull: false, default: undefined };
    default:
      return { sql: 'text', notNull: true, default: "''" };
  }
}

/** A day as the driver gives it: pg makes a date column a Date at local midnight, so its local parts are the day. */
function isoDayOf(value: unknown): string {
  if (value instanceof Date) {
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  }
  return String(value);
}

export function fromUserFieldColumn(field: UserField, raw: unknown): UserFieldValue {
  switch (field.type) {
    case 'boolean':
      return raw === true || raw === 1 || raw === '1' || raw === 't';
    case 'integer':
      return raw === null || raw === undefined ? null : Number(raw);
    case 'date':
      return raw === null || raw === undefined ? null : isoDayOf(raw);
    default:
      return raw === null || raw === undefined ? '' : typeof raw === 'string' ? raw : JSON.stringify(raw);
  }
}

export function toUserFieldColumn(field: UserField, value: UserFieldValue): string | number | null {
  if (field.type === 'boolean') return value === true ? 1 : 0;
  if (value === null || typeof value === 'boolean') return field.type === 'integer' || field.type === 'date' ? null : '';
  return value;
}

/** The project's fields of a row, by name. */
export function userFieldValuesOf(fields: readonly UserField[], row: Record<string, unknown>): Record<string, UserFieldValue> {
  return Object.fromEntries(fields.map((field) => [field.name, fromUserFieldColumn(field, row[field.name])]));
}

/** The columns to write for the project's fields among `values` (a NewUser or UserChanges); the others are left alone. */
export function userFieldColumnsOf(fields: readonly UserField[], values: object): Record<string, string | number | null> {
  const given = values as Record<string, unknown>;
  return Object.fromEntries(fields.filter((field) => given[field.name] !== undefined).map((field) => [field.name, toUserFieldColumn(field, given[field.name] as UserFieldValue)]));
}
