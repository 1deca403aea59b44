import type { Selectable } from 'kysely';
import type { ApiToken } from '../../tokens/model.js';
import type { ApiTokenRepository, ApiTokenSearch, ListedApiToken } from '../../tokens/ports.js';
import type { User } from '../../account/model.js';
import { translateConstraintViolations, type RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type ApiTokensTable } from './schema.js';
import { userLabelOf, userStartsWith } from './user-labels.js';
import { toUser } from './users.js';

/** The unique key on key_hash, as PostgreSQL names it and as SQLite reports it. */
const POSTGRES_KEY_HASH_UNIQUE = 'latchkey_api_tokens_key_hash_unique';
const SQLITE_KEY_HASH_UNIQUE = 'UNIQUE constraint failed: latchkey_api_tokens.key_hash';

/**
 * How often createIfAbsent tries again when the token it stepped aside for is deleted before it
 * can read it. Each round needs a parallel creation and a deletion to interleave with it exactly;
 * a few rounds are more than any real sequence of requests makes.
 */
const CREATE_ATTEMPTS = 3;

function toApiToken(row: Selectable<ApiTokensTable>): ApiToken {
  return { userId: row.user_id, keyHash: row.key_hash, sealedKey: row.sealed_key, createdAt: fromInstantColumn(row.created_at) };
}

/** Whether a driver error is the refusal of a key hash that another token already has. */
function isDuplicateKeyHash(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  return (code === '23505' && constraint === POSTGRES_KEY_HASH_UNIQUE) || (code === 'SQLITE_CONSTRAINT_UNIQUE' && message === SQLITE_KEY_HASH_UNIQUE);
}

export function createApiTokenRepository({ db, dialect, usernameType, userFields, credentialReads }: RepositoryContext): ApiTokenRepository {
  async function findForUser(userId: number): Promise<ApiToken | undefined> {
    const row = await db.selectFrom('latchkey_api_tokens').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row === undefined ? undefined : toApiToken(row);
  }

  /**
   * The user's token, for createIfAbsent. Inside a transaction on PostgreSQL the row is locked
   * until the transaction ends, so the token returned stays the user's token for the rest of it: a
   * caller replacing a token (tokens/api-tokens.ts) decides on it and then deletes it, and no
   * parallel replacement can slip in between (it waits, then finds the new token). SQLite needs
   * no lock: a transaction there holds the only write lock.
   */
  async function findForUserHeld(userId: number): Promise<ApiToken | undefined> {
    const query = db.selectFrom('latchkey_api_tokens').selectAll().where('user_id', '=', userId);
    const row = await (dialect === 'postgres' && db.isTransaction ? query.forUpdate() : query).executeTakeFirst();
    return row === undefined ? undefined : toApiToken(row);
  }

  /** The inserted token, or undefined when the user already had one (the insert then did nothing). */
  async function insertUnlessPresent(token: ApiToken): Promise<ApiToken | undefined> {
    try {
      // translateConstraintViolations turns a user deleted a moment ago (the foreign key) into
      // 'not_found', and its savepoint keeps a caller's PostgreSQL transaction usable after that.
      const row = await translateConstraintViolations(db, dialect, () =>
        db
          .insertInto('latchkey_api_tokens')
          .values({ user_id: token.userId, key_hash: token.keyHash, sealed_key: token.sealedKey, created_at: toInstantColumn(token.createdAt) })
          // Only the user's own token is stepped aside for: the conflict target is user_id, so a
          // key hash already in use still fails rather than being silently dropped.
          .onConflict((conflict) => conflict.column('user_id').doNothing())
          .returningAll()
          .executeTakeFirst(),
      );
      return row === undefined ? undefined : toApiToken(row);
    } catch (error) {
      // Keys are 160 random bits, so this means a caller reused a key: a bug, not a user's input.
      if (isDuplicateKeyHash(error)) throw new Error('Another token already has this key hash: API token keys must be freshly random.');
      throw error;
    }
  }

  return {
    async createIfAbsent(token: ApiToken): Promise<ApiToken> {
      // One insert that yields to the user's existing token instead of failing. On PostgreSQL an
      // insert that meets a parallel transaction's uncommitted row for the same user waits for it
      // to commit and then does nothing; the read that follows is a new statement (read
      // committed), so it sees the winner's row. On SQLite there is one writer at a time.
      for (let attempt = 1; ; attempt += 1) {
        const inserted = await insertUnlessPresent(token);
        if (inserted !== undefined) return inserted;
        const existing = await findForUserHeld(token.userId);
        if (existing !== undefined) return existing;
        // The token stepped aside for was deleted before it could be read (or, locking it, this
        // waited for a transaction that deleted it): try again.
        if (attempt >= CREATE_ATTEMPTS) throw new Error("The user's API token kept changing while one was being created; try again.");
      }
    },

    async findByKeyHash(keyHash: string): Promise<ApiToken | undefined> {
      const row = await db.selectFrom('latchkey_api_tokens').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
      return row === undefined ? undefined : toApiToken(row);
    },

    async findUserByKeyHash(keyHash: string): Promise<User | undefined> {
      const row = await credentialReads.userByApiTokenKeyHash(keyHash);
      return row === undefined ? undefined : toUser(row, userFields);
    },

    findForUser,

    async deleteForUser(userId: number): Promise<boolean> {
      const result = await db.deleteFrom('latchkey_api_tokens').where('user_id', '=', userId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async search(query: ApiTokenSearch): Promise<ListedApiToken[]> {
      // Only the listed columns are read: never the key's hash or its sealed copy.
      let select = db
        .selectFrom('latchkey_api_tokens as t')
        .innerJoin('latchkey_users as u', 'u.id', 't.user_id')
        .select(['t.user_id', 't.created_at', 'u.email as user_email'])
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select('u.username as user_username'));
      const text = query.text?.trim() ?? '';
      if (text !== '') select = select.where(userStartsWith(text, usernameType));
      if (query.afterUserId !== undefined) select = select.where('t.user_id', '<', query.afterUserId);
      const rows = await select.orderBy('t.user_id', 'desc').limit(query.limit).execute();
      return rows.map((row) => ({
        userId: row.user_id,
        createdAt: fromInstantColumn(row.created_at),
        user: userLabelOf({ user_id: row.user_id, user_email: row.user_email, user_username: 'user_username' in row ? (row.user_username as string | null) : null }),
      }));
    },
  };
}
