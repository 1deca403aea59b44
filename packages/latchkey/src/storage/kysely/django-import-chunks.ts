import type { Transaction } from 'kysely';
import type { DatabaseSchema } from './schema.js';

// What the import's tables (django-import-*-tables.ts) share: the transaction they run in, and
// INSERTs cut to a size every database accepts.

export type Db = Transaction<DatabaseSchema>;

/** Rows per INSERT: well inside SQLite's 32,766 bound variables and PostgreSQL's 65,535 for the widest of Latchkey's tables. */
const INSERT_CHUNK = 500;

/** The bound variables an INSERT may take, below SQLite's bound (the lower of the two). */
const INSERT_VARIABLES = 30_000;

/** Rows per INSERT of a table with `columns` columns: fewer than INSERT_CHUNK when a project's user fields widen latchkey_users. */
export function rowsPerInsert(columns: number): number {
  return Math.max(1, Math.min(INSERT_CHUNK, Math.floor(INSERT_VARIABLES / columns)));
}

export async function inChunks<R>(rows: readonly R[], write: (chunk: R[]) => Promise<unknown>, chunk = INSERT_CHUNK): Promise<void> {
  for (let start = 0; start < rows.length; start += chunk) await write(rows.slice(start, start + chunk));
}
