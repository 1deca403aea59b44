import { sql, type Selectable } from 'kysely';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { Authenticator, AuthenticatorType, NewAuthenticator } from '../../mfa/model.js';
import type { AuthenticatorRepository, AuthenticatorSearch, ListedAuthenticator } from '../../mfa/ports.js';
import { translateConstraintViolations, type RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type AuthenticatorsTable } from './schema.js';
import { userLabelOf, userStartsWith } from './user-labels.js';

/** The unique index on (user_id, type), as PostgreSQL names it and as SQLite lists its columns. */
const POSTGRES_UNIQUE_INDEX = 'latchkey_authenticators_user_type_unique';
const SQLITE_UNIQUE_COLUMNS = 'UNIQUE constraint failed: latchkey_authenticators.user_id, latchkey_authenticators.type';
const POSTGRES_CREDENTIAL_INDEX = 'latchkey_authenticators_credential_unique';
const SQLITE_CREDENTIAL_COLUMN = 'UNIQUE constraint failed: latchkey_authenticators.credential_id';

function toAuthenticator(row: Selectable<AuthenticatorsTable>): Authenticator {
  return {
    id: row.id,
    userId: row.user_id,
    type: row.type,
    data: JSON.parse(row.data) as Record<string, unknown>,
    credentialId: row.credential_id,
    createdAt: fromInstantColumn(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : fromInstantColumn(row.last_used_at),
  };
}

/**
 * Whether a driver error is the refusal of a second authenticator of one type for one user, or
 * of a WebAuthn credential registered already.
 */
function isDuplicate(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) {
    return false;
  }
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  if (code === '23505') return constraint === POSTGRES_UNIQUE_INDEX || constraint === POSTGRES_CREDENTIAL_INDEX;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' && (message === SQLITE_UNIQUE_COLUMNS || message === SQLITE_CREDENTIAL_COLUMN);
}

export function createAuthenticatorRepository({ db, dialect, usernameType }: RepositoryContext): AuthenticatorRepository {
  return {
    async create(input: NewAuthenticator): Promise<Authenticator> {
      // The savepoint of translateConstraintViolations keeps a caller's transaction usable on
      // PostgreSQL after either refusal, and it turns the foreign-key failure (the user is gone)
      // into 'not_found'; the unique index it does not know is translated here.
      try {
        const row = await translateConstraintViolations(db, dialect, () =>
          db
            .insertInto('latchkey_authenticators')
            .values({
              user_id: input.userId,
              type: input.type,
              data: JSON.stringify(input.data),
              credential_id: input.credentialId ?? null,
              created_at: toInstantColumn(input.createdAt),
              last_used_at: null,
            })
            .returningAll()
            .executeTakeFirstOrThrow(),
        );
        return toAuthenticator(row);
      } catch (error) {
        if (isDuplicate(error)) {
          throw new LatchkeyError('authenticator_exists', 'You already have an authenticator of this type.', { cause: error });
        }
        throw error;
      }
    },

    async findById(id: number): Promise<Authenticator | undefined> {
      const row = await db.selectFrom('latchkey_authenticators').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toAuthenticator(row);
    },

    async findByCredentialId(credentialId: string): Promise<Authenticator | undefined> {
      const row = await db.selectFrom('latchkey_authenticators').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
      return row === undefined ? undefined : toAuthenticator(row);
    },

    async updateData(id: number, data: Record<string, unknown>): Promise<boolean> {
      const result = await db.updateTable('latchkey_authenticators').set({ data: JSON.stringify(data) }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async findForUser(userId: number, type: AuthenticatorType): Promise<Authenticator | undefined> {
      const row = await db
        .selectFrom('latchkey_authenticators')
        .selectAll()
        .where('user_id', '=', userId)
        .where('type', '=', type)
        .executeTakeFirst();
      return row === undefined ? undefined : toAuthenticator(row);
    },

    async listForUser(userId: number): Promise<Authenticator[]> {
      const rows = await db
        .selectFrom('latchkey_authenticators')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toAuthenticator);
    },

    async markUsed(id: number, at: Date): Promise<boolean> {
      const result = await db.updateTable('latchkey_authenticators').set({ last_used_at: toInstantColumn(at) }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(id: number): Promise<boolean> {
      // The spent recovery codes go with it (on delete cascade).
      const result = await db.deleteFrom('latchkey_authenticators').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async useRecoveryCode(authenticatorId: number, index: number, at: Date): Promise<boolean> {
      // One statement: the primary key on (authenticator_id, code_index) lets exactly one of any
      // number of parallel inserts through, and the others do nothing instead of failing. The
      // EXISTS turns a gone authenticator into "nothing inserted" rather than a foreign-key failure.
      // One deleted between the EXISTS and the insert (on PostgreSQL the EXISTS reads a snapshot)
      // still fails the key; that 'not_found' means false as well, and the savepoint of
      // translateConstraintViolations keeps a caller's transaction usable after it. (The WHERE
      // also spares SQLite's parser the ambiguity of INSERT ... SELECT ... ON CONFLICT.)
      try {
        const result = await translateConstraintViolations(db, dialect, () =>
          db
            .insertInto('latchkey_recovery_code_uses')
            .columns(['authenticator_id', 'code_index', 'used_at'])
            .expression(
              db
                .selectNoFrom([
                  sql<number>`${authenticatorId}`.as('authenticator_id'),
                  sql<number>`${index}`.as('code_index'),
                  sql<string>`${toInstantColumn(at)}`.as('used_at'),
                ])
                .where((eb) => eb.exists(eb.selectFrom('latchkey_authenticators').select(eb.lit(1).as('one')).where('id', '=', authenticatorId))),
            )
            .onConflict((conflict) => conflict.columns(['authenticator_id', 'code_index']).doNothing())
            .returning('code_index')
            .execute(),
        );
        return result.length > 0;
      } catch (error) {
        if (isLatchkeyError(error, 'not_found')) {
          return false;
        }
        throw error;
      }
    },

    async usedRecoveryCodes(authenticatorId: number): Promise<number[]> {
      const rows = await db
        .selectFrom('latchkey_recovery_code_uses')
        .select('code_index')
        .where('authenticator_id', '=', authenticatorId)
        .orderBy('code_index')
        .execute();
      return rows.map((row) => row.code_index);
    },

    async search(query: AuthenticatorSearch): Promise<ListedAuthenticator[]> {
      // Only the listed columns are read: never data, which holds the sealed secrets.
      let select = db
        .selectFrom('latchkey_authenticators as a')
        .innerJoin('latchkey_users as u', 'u.id', 'a.user_id')
        .select(['a.id', 'a.user_id', 'a.type', 'a.created_at', 'a.last_used_at', 'u.email as user_email'])
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select('u.username as user_username'));
      const text = query.text?.trim() ?? '';
      if (text !== '') select = select.where(userStartsWith(text, usernameType));
      if (query.type !== undefined) select = select.where('a.type', '=', query.type);
      if (query.userId !== undefined) select = select.where('a.user_id', '=', query.userId);
      if (query.afterId !== undefined) select = select.where('a.id', '<', query.afterId);
      const rows = await select.orderBy('a.id', 'desc').limit(query.limit).execute();
      return rows.map((row) => ({
        id: row.id,
        userId: row.user_id,
        type: row.type,
        createdAt: fromInstantColumn(row.created_at),
        lastUsedAt: row.last_used_at === null ? null : fromInstantColumn(row.last_used_at),
        user: userLabelOf({ user_id: row.user_id, user_email: row.user_email, user_username: 'user_username' in row ? (row.user_username as string | null) : null }),
      }));
    },
  };
}
