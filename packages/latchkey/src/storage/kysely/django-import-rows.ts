import type { Transaction } from 'kysely';
import type { RowOutcome } from '../../django-import/ports.js';
import type { DatabaseSchema } from './schema.js';

/*
 * How `manage import-django` writes one kind of row (django-import-target.ts): each kind's rules
 * (django-import-account-rules.ts, django-import-mfa-social-rules.ts) say how its rows are found,
 * compared and inserted; importRows applies them to a batch.
 */

export type Db = Transaction<DatabaseSchema>;
export type RowId = number | string;

/**
 * One unique value a table keeps (an email, a provider's uid): which rows of the database hold
 * which of the values asked about, and how to say that one does.
 */
export interface UniqueValue<R> {
  /** The row's value, or undefined when the rule does not bind it (an unverified address is not unique). */
  of(row: R): string | undefined;
  holders(db: Db, rows: readonly R[]): Promise<Map<string, RowId>>;
  reason(holder: RowId): string;
}

/** How the rows of one kind are found, compared and written. */
export interface TableRules<R> {
  idOf(row: R): RowId;
  /** What must match for a row already there under the same id to be this row. */
  identity(row: R): string;
  existing(db: Db, rows: readonly R[]): Promise<Map<RowId, string>>;
  takenReason(id: RowId): string;
  /** Why a second row with an id already met in this batch is not written (the sources' primary keys make it rare). */
  repeatedReason?: string;
  unique: UniqueValue<R>[];
  insert(db: Db, rows: readonly R[]): Promise<void>;
}

/** Rows per INSERT: well inside SQLite's 32,766 bound variables and PostgreSQL's 65,535 for the widest table. */
const INSERT_CHUNK = 500;

export async function inChunks<R>(rows: readonly R[], write: (chunk: R[]) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) await write(rows.slice(start, start + INSERT_CHUNK));
}

/**
 * The outcome of each row: present when its id holds the same row, skipped when it holds another
 * or a unique value of the row is held by another row (in the database, or earlier in this batch),
 * inserted otherwise. Checking first, rather than letting a unique index refuse the INSERT, keeps
 * the transaction usable on PostgreSQL and names the reason.
 */
export async function importRows<R>(db: Db, rules: TableRules<R>, rows: readonly R[]): Promise<RowOutcome[]> {
  const outcomes: RowOutcome[] = rows.map(() => 'inserted');
  const existing = rows.length === 0 ? new Map<RowId, string>() : await rules.existing(db, rows);
  let candidates: number[] = [];
  const met = new Set<RowId>();
  rows.forEach((row, index) => {
    const id = rules.idOf(row);
    const there = existing.get(id);
    if (met.has(id)) outcomes[index] = { skipped: rules.repeatedReason ?? 'the source holds it twice' };
    else if (there === undefined) candidates.push(index);
    else outcomes[index] = there === rules.identity(row) ? 'present' : { skipped: rules.takenReason(id) };
    met.add(id);
  });
  for (const unique of rules.unique) {
    if (candidates.every((index) => unique.of(rows[index]!) === undefined)) continue;
    const held = await unique.holders(db, candidates.map((index) => rows[index]!));
    const remaining: number[] = [];
    for (const index of candidates) {
      const row = rows[index]!;
      const value = unique.of(row);
      const holder = value === undefined ? undefined : held.get(value);
      if (holder !== undefined && holder !== rules.idOf(row)) {
        outcomes[index] = { skipped: unique.reason(holder) };
        continue;
      }
      if (value !== undefined) held.set(value, rules.idOf(row));
      remaining.push(index);
    }
    candidates = remaining;
  }
  await rules.insert(db, candidates.map((index) => rows[index]!));
  return outcomes;
}

export const ids = <R>(rows: readonly R[], id: (row: R) => number): number[] => [...new Set(rows.map(id))];
export const defined = (values: (string | undefined)[]): string[] => [...new Set(values.filter((value): value is string => value !== undefined))];
