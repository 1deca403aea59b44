/**
 * Every difference between SQLite and PostgreSQL that the repositories meet lives here: how each
 * driver reports a unique violation or a missing table, how a row is locked, and how a failed
 * statement affects an open transaction. The repositories themselves are dialect-free.
 */
import { sql, type Kysely } from 'kysely';
import { LatchkeyError } from '../../core/errors.js';
import type { UsernameType } from '../../config/settings.js';
import type { UserField } from '../../core/user-fields.js';
import type { CredentialReads } from './credential-reads.js';
import type { DatabaseSchema } from './schema.js';

export type DatabaseDialect = 'sqlite' | 'postgres';

/** The database itself or one open transaction: repositories work the same on either. */
export type Executor = Kysely<DatabaseSchema>;

/** What building a query needs. */
export interface QueryContext {
  db: Executor;
  dialect: DatabaseDialect;
  usernameType: UsernameType;
  /** The project's own user fields, columns of latchkey_users (user-field-columns.ts). */
  userFields: readonly UserField[];
}

export interface RepositoryContext extends QueryContext {
  /** The reads of every authenticated request, without the query builder (credential-reads.ts). */
  credentialReads: CredentialReads;
}

type TakenCode = 'username_taken' | 'email_taken';

/** PostgreSQL reports the violated index by name (error field `constraint`). */
const POSTGRES_UNIQUE_INDEXES: Record<string, TakenCode> = {
  latchkey_users_username_key_unique: 'username_taken',
  latchkey_users_email_unique: 'email_taken',
  latchkey_email_addresses_user_email_unique: 'email_taken',
  latchkey_email_addresses_verified_email_unique: 'email_taken',
};

/** SQLite reports the violated index by its columns: "UNIQUE constraint failed: t.a, t.b". */
const SQLITE_UNIQUE_COLUMNS: Record<string, TakenCode> = {
  'latchkey_users.username_key': 'username_taken',
  'latchkey_users.email': 'email_taken',
  'latchkey_email_addresses.user_id, latchkey_email_addresses.email': 'email_taken',
  'latchkey_email_addresses.email': 'email_taken',
};

const TAKEN_MESSAGES: Record<TakenCode, { message: string; param: string }> = {
  username_taken: { message: 'A user with that username already exists.', param: 'username' },
  email_taken: { message: 'A user is already registered with this email address.', param: 'email' },
};

interface DriverError {
  code?: unknown;
  constraint?: unknown;
  message?: unknown;
}

function translatedError(error: unknown): LatchkeyError | undefined {
  if (typeof error !== 'object' || error === null) {
    return undefined;
  }
  const { code, constraint, message } = error as DriverError;
  // A row that refers to a user deleted a moment ago (a race with an admin deleting the account).
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503') {
    return new LatchkeyError('not_found', 'The user does not exist.');
  }
  let taken: TakenCode | undefined;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' && typeof message === 'string') {
    taken = SQLITE_UNIQUE_COLUMNS[message.replace(/^UNIQUE constraint failed: /, '')];
  } else if (code === '23505' && typeof constraint === 'string') {
    taken = POSTGRES_UNIQUE_INDEXES[constraint];
  }
  return taken === undefined ? undefined : new LatchkeyError(taken, TAKEN_MESSAGES[taken].message, { param: TAKEN_MESSAGES[taken].param });
}

export function isMissingTableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) {
    return false;
  }
  const { code, message } = error as DriverError;
  return code === '42P01' || (typeof message === 'string' && message.startsWith('no such table'));
}

let savepointCounter = 0;

/**
 * Runs a write that a constraint may refuse, and turns the refusal into 'username_taken',
 * 'email_taken' (a unique index) or 'not_found' (a foreign key to a user that is gone), so that no
 * driver error (with table and index names) reaches a caller.
 *
 * Inside a transaction PostgreSQL aborts the whole transaction on a failed statement, while SQLite
 * carries on. The savepoint makes both behave like SQLite: a flow may catch 'email_taken' and go on
 * with the same transaction on either database.
 */
export async function translateConstraintViolations<T>(db: Executor, dialect: DatabaseDialect, write: () => Promise<T>): Promise<T> {
  const savepoint = dialect === 'postgres' && db.isTransaction ? `latchkey_write_${++savepointCounter}` : undefined;
  if (savepoint !== undefined) {
    await sql`savepoint ${sql.id(savepoint)}`.execute(db);
  }
  try {
    const result = await write();
    if (savepoint !== undefined) {
      await sql`release savepoint ${sql.id(savepoint)}`.execute(db);
    }
    return result;
  } catch (error) {
    if (savepoint !== undefined) {
      // Should the rollback itself fail, the transaction is unusable and its next statement will
      // say so; the error worth reporting is still the original one.
      await sql`rollback to savepoint ${sql.id(savepoint)}`.execute(db).catch(() => undefined);
    }
    throw translatedError(error) ?? error;
  }
}

/** Runs `work` in the transaction `db` already is, or in a new one. */
export async function inTransaction<T>(db: Executor, work: (trx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * Serializes changes to one user's email addresses. On PostgreSQL two concurrent setPrimary calls
 * would otherwise each clear the other's primary flag from a stale snapshot and then both set
 * theirs, breaking "one primary per user" (or deadlocking); locking the user row first makes them
 * run one after the other. SQLite needs no lock: there is one writer at a time (one connection per
 * process, and transactions begin IMMEDIATE so other processes wait for the write lock).
 */
export async function lockUserRow(db: Executor, dialect: DatabaseDialect, userId: number): Promise<void> {
  if (dialect === 'postgres') {
    await db.selectFrom('latchkey_users').select('id').where('id', '=', userId).forUpdate().execute();
  }
}
