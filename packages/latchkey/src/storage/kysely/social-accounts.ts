import { sql, type RawBuilder, type Selectable } from 'kysely';
import { LatchkeyError } from '../../core/errors.js';
import type { NewSocialAccount, SocialAccount } from '../../socialaccount/model.js';
import type { ListedSocialAccount, SocialAccountRepository, SocialAccountSearch } from '../../socialaccount/ports.js';
import { lockUserRow, translateConstraintViolations, type RepositoryContext } from './dialect.js';
import { fromInstantColumn, fromJsonObjectColumn, toInstantColumn, type SocialAccountsTable } from './schema.js';
import { userLabelOf, userStartsWith } from './user-labels.js';

/** The unique constraint on (provider, uid), as PostgreSQL names it and as SQLite reports it. */
const POSTGRES_PROVIDER_UID_UNIQUE = 'latchkey_social_accounts_provider_uid_unique';
const SQLITE_PROVIDER_UID_UNIQUE = 'UNIQUE constraint failed: latchkey_social_accounts.provider, latchkey_social_accounts.uid';

/**
 * The uid starts with the text, case included as uids are compared (SQLite's LIKE would ignore
 * case): no pattern, so no wildcard to escape; lengths in characters on both databases.
 */
function uidStartsWith(text: string): RawBuilder<boolean> {
  return sql<boolean>`substr(s.uid, 1, length(cast(${text} as text))) = cast(${text} as text)`;
}

function toSocialAccount(row: Selectable<SocialAccountsTable>): SocialAccount {
  return {
    id: row.id,
    userId: row.user_id,
    provider: row.provider,
    uid: row.uid,
    extraData: fromJsonObjectColumn(row.extra_data),
    dateJoined: fromInstantColumn(row.date_joined),
    lastLogin: fromInstantColumn(row.last_login),
  };
}

/** Whether a driver error is the refusal of a (provider, uid) that is already connected. */
function isDuplicateProviderUid(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  return (code === '23505' && constraint === POSTGRES_PROVIDER_UID_UNIQUE) || (code === 'SQLITE_CONSTRAINT_UNIQUE' && message === SQLITE_PROVIDER_UID_UNIQUE);
}

export function createSocialAccountRepository({ db, dialect, usernameType }: RepositoryContext): SocialAccountRepository {
  return {
    async create(input: NewSocialAccount): Promise<SocialAccount> {
      // The savepoint of translateConstraintViolations keeps a caller's PostgreSQL transaction
      // usable after either refusal, and it turns the foreign-key failure (the user is gone) into
      // 'not_found'; the unique constraint it does not know is translated here.
      try {
        const row = await translateConstraintViolations(db, dialect, () =>
          db
            .insertInto('latchkey_social_accounts')
            .values({
              user_id: input.userId,
              provider: input.provider,
              uid: input.uid,
              extra_data: JSON.stringify(input.extraData),
              date_joined: toInstantColumn(input.dateJoined),
              last_login: toInstantColumn(input.lastLogin),
            })
            .returningAll()
            .executeTakeFirstOrThrow(),
        );
        return toSocialAccount(row);
      } catch (error) {
        if (isDuplicateProviderUid(error)) {
          throw new LatchkeyError('social_account_exists', 'This account is already connected to a user.', { cause: error });
        }
        throw error;
      }
    },

    async find(provider: string, uid: string): Promise<SocialAccount | undefined> {
      const row = await db.selectFrom('latchkey_social_accounts').selectAll().where('provider', '=', provider).where('uid', '=', uid).executeTakeFirst();
      return row === undefined ? undefined : toSocialAccount(row);
    },

    async findById(id: number): Promise<SocialAccount | undefined> {
      const row = await db.selectFrom('latchkey_social_accounts').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toSocialAccount(row);
    },

    async countForProvider(provider: string): Promise<number> {
      const row = await db
        .selectFrom('latchkey_social_accounts')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('provider', '=', provider)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },

    async listForUserLocked(userId: number): Promise<SocialAccount[]> {
      await lockUserRow(db, dialect, userId);
      return this.listForUser(userId);
    },

    async listForUser(userId: number): Promise<SocialAccount[]> {
      const rows = await db
        .selectFrom('latchkey_social_accounts')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('date_joined')
        .orderBy('id')
        .execute();
      return rows.map(toSocialAccount);
    },

    async recordLogin(id: number, extraData: Record<string, unknown>, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('latchkey_social_accounts')
        .set({ extra_data: JSON.stringify(extraData), last_login: toInstantColumn(at) })
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(id: number): Promise<boolean> {
      // Its tokens go with it (on delete cascade).
      const result = await db.deleteFrom('latchkey_social_accounts').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async search(query: SocialAccountSearch): Promise<ListedSocialAccount[]> {
      // Only the listed columns are read: never extra_data, which may hold the provider's id token.
      let select = db
        .selectFrom('latchkey_social_accounts as s')
        .innerJoin('latchkey_users as u', 'u.id', 's.user_id')
        .select(['s.id', 's.user_id', 's.provider', 's.uid', 's.date_joined', 's.last_login', 'u.email as user_email'])
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select('u.username as user_username'));
      const text = query.text?.trim() ?? '';
      if (text !== '') select = select.where((eb) => eb.or([uidStartsWith(text), userStartsWith(text, usernameType)]));
      if (query.provider !== undefined) select = select.where('s.provider', '=', query.provider);
      if (query.afterId !== undefined) select = select.where('s.id', '<', query.afterId);
      const rows = await select.orderBy('s.id', 'desc').limit(query.limit).execute();
      return rows.map((row) => ({
        id: row.id,
        userId: row.user_id,
        provider: row.provider,
        uid: row.uid,
        dateJoined: fromInstantColumn(row.date_joined),
        lastLogin: fromInstantColumn(row.last_login),
        user: userLabelOf({ user_id: row.user_id, user_email: row.user_email, user_username: 'user_username' in row ? (row.user_username as string | null) : null }),
      }));
    },
  };
}
