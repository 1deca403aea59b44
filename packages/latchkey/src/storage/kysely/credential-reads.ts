/**
 * The two reads every authenticated request makes: the user an API token belongs to, and a
 * session with its user. They run on every API call, so they skip the query builder: each is SQL
 * written once, below, and run on a statement the driver prepares once (better-sqlite3's prepared
 * statement; a named statement on each PostgreSQL connection), reading only the columns a request
 * needs, in one query each (the session joins its user, as the token does).
 *
 * Nothing is cached between requests: each read asks the database, so a token deleted or a session
 * ended by any process is refused by the very next request everywhere.
 */
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';
import { createHash } from 'node:crypto';
import type { DatabaseSchema, SessionsTable, UserRow } from './schema.js';
import type { UserShape } from './user-field-columns.js';

/** A session's columns, then its user's (absent when the session has no user: a visitor's). */
export type SessionWithUserRow = Selectable<SessionsTable> & { [Column in keyof UserRow]: UserRow[Column] | null };

export interface CredentialReads {
  userByApiTokenKeyHash(keyHash: string): Promise<UserRow | undefined>;
  sessionWithUser(idHash: string): Promise<SessionWithUserRow | undefined>;
}

/** Both tables' columns are named apart (no session column shares a user column's name), so one row holds both. */
const SESSION_COLUMNS = ['id_hash', 'user_id', 'data', 'created_at', 'last_seen_at', 'expires_at', 'ip_address', 'user_agent'];

function userColumns({ usernameType, userFields }: UserShape): string[] {
  // The username column exists only in projects that sign in by username; the project's own
  // fields are read with the rest, so request.user has them without a second query.
  const username = usernameType === 'username' ? ['username'] : [];
  const own = userFields.map((field) => field.name);
  return ['id', ...username, 'email', 'name', 'password', 'is_active', 'is_staff', 'is_superuser', 'date_joined', 'last_login', 'language', ...own];
}

/** The SQL of both reads; `parameter` is the dialect's placeholder for the one value. */
function credentialSql(shape: UserShape, parameter: string): { userByApiToken: string; sessionWithUser: string } {
  const users = userColumns(shape).map((column) => `u.${column}`);
  const sessions = SESSION_COLUMNS.map((column) => `s.${column}`);
  return {
    userByApiToken: `select ${users.join(', ')} from latchkey_api_tokens t join latchkey_users u on u.id = t.user_id where t.key_hash = ${parameter}`,
    sessionWithUser: `select ${[...sessions, ...users].join(', ')} from latchkey_sessions s left join latchkey_users u on u.id = s.user_id where s.id_hash = ${parameter}`,
  };
}

/**
 * The same SQL run through Kysely's executor: inside a transaction, where the reads must see the
 * transaction's own writes, and wherever no driver handle is at hand.
 */
export function executorCredentialReads(db: Kysely<DatabaseSchema>, shape: UserShape, parameter: '?' | '$1'): CredentialReads {
  const text = credentialSql(shape, parameter);
  const first = async <Row>(statement: string, value: string): Promise<Row | undefined> => {
    const result = await db.executeQuery<Row>(CompiledQuery.raw(statement, [value]));
    return result.rows[0];
  };
  return {
    userByApiTokenKeyHash: (keyHash) => first<UserRow>(text.userByApiToken, keyHash),
    sessionWithUser: (idHash) => first<SessionWithUserRow>(text.sessionWithUser, idHash),
  };
}

/**
 * On better-sqlite3 itself, synchronously. The connection is Kysely's own (an in-memory database
 * has no other), so a read must not slip into a transaction that another request has open on it
 * between two of its statements: it would see writes that may yet be rolled back. While one is
 * open, the read goes through Kysely, which waits for the transaction to end, as every query did
 * before. Otherwise the connection is idle between statements (better-sqlite3 runs each to its end
 * at once), and the read is its own implicit transaction, seeing every commit of every process.
 */
export function sqliteCredentialReads(database: BetterSqlite3.Database, shape: UserShape, throughKysely: CredentialReads): CredentialReads {
  const text = credentialSql(shape, '?');
  // Prepared on first use: before the migrations have run there are no tables to prepare against.
  let userByApiToken: BetterSqlite3.Statement<[string], UserRow> | undefined;
  let sessionWithUser: BetterSqlite3.Statement<[string], SessionWithUserRow> | undefined;
  return {
    async userByApiTokenKeyHash(keyHash) {
      if (database.inTransaction) return throughKysely.userByApiTokenKeyHash(keyHash);
      userByApiToken ??= database.prepare<[string], UserRow>(text.userByApiToken);
      return userByApiToken.get(keyHash);
    },
    async sessionWithUser(idHash) {
      if (database.inTransaction) return throughKysely.sessionWithUser(idHash);
      sessionWithUser ??= database.prepare<[string], SessionWithUserRow>(text.sessionWithUser);
      return sessionWithUser.get(idHash);
    },
  };
}

/**
 * On the pool itself, as named statements: PostgreSQL parses and plans each once per connection,
 * and later runs only bind the value. The names carry a digest of the text, which differs with the
 * username type and the project's fields (the pool serves one project, but a name must never meet
 * two texts).
 */
export function postgresCredentialReads(pool: pg.Pool, shape: UserShape): CredentialReads {
  const text = credentialSql(shape, '$1');
  const first = async <Row extends pg.QueryResultRow>(name: string, statement: string, value: string): Promise<Row | undefined> => {
    const digest = createHash('sha256').update(statement).digest('hex').slice(0, 12);
    const result = await pool.query<Row>({ name: `${name}_${digest}`, text: statement, values: [value] });
    return result.rows[0];
  };
  return {
    userByApiTokenKeyHash: (keyHash) => first<UserRow>('latchkey_user_by_api_token', text.userByApiToken, keyHash),
    sessionWithUser: (idHash) => first<SessionWithUserRow>('latchkey_session_with_user', text.sessionWithUser, idHash),
  };
}
