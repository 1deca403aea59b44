import type { Transaction } from 'kysely';
import type { DatabaseSchema } from './schema.js';

// What the import's tables (django-import-*-tables.ts) share: the transaction they run in, and
// INSERTs cut to a size every database accepts.

export type Db = Transaction<DatabaseSchema>;

/** Rows per INSERT: well inside SQLite's 32,766 bound variables and PostgreSQL's 65,535 for the widest table. */
const INSERT_CHUNK = 500;

export async function inChunks<R>(rows: readonly R[], write: (chunk: R[]) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) await write(rows.slice(start, start + INSERT_CHUNK));
}
