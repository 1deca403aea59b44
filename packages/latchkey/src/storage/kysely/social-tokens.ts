import { sql, type Selectable } from 'kysely';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { NewSocialToken, SocialToken } from '../../socialaccount/model.js';
import type { ListedSocialToken, SocialTokenRepository, SocialTokenSearch } from '../../socialaccount/ports.js';
import { translateConstraintViolations, type RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type SocialTokensTable } from './schema.js';
import { userLabelOf } from './user-labels.js';

/** The unique index on (account_id, coalesce(app_id, 0)): PostgreSQL names it, SQLite names an expression index too. */
const TOKEN_KEY_INDEX = 'latchkey_social_tokens_account_app_unique';
const SQLITE_TOKEN_KEY_UNIQUE = `UNIQUE constraint failed: index '${TOKEN_KEY_INDEX}'`;

/** The index's expression, which the upsert names as its conflict target. */
const TOKEN_KEY = sql`account_id, (coalesce(app_id, 0))`;

function toSocialToken(row: Selectable<SocialTokensTable>): SocialToken {
  return {
    id: row.id,
    accountId: row.account_id,
    appId: row.app_id,
    sealedToken: row.sealed_token,
    sealedTokenSecret: row.sealed_token_secret,
    expiresAt: row.expires_at === null ? null : fromInstantColumn(row.expires_at),
  };
}

/** Whether a driver error is the refusal of a second token for one account and app. */
export function isDuplicateTokenKey(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  return (code === '23505' && constraint === TOKEN_KEY_INDEX) || (code === 'SQLITE_CONSTRAINT_UNIQUE' && message === SQLITE_TOKEN_KEY_UNIQUE);
}

export function createSocialTokenRepository({ db, dialect, usernameType }: RepositoryContext): SocialTokenRepository {
  return {
    async save(input: NewSocialToken): Promise<SocialToken> {
      // One statement, so parallel saves for one account and app leave one row: on PostgreSQL an
      // insert that meets a parallel transaction's uncommitted row waits for it, then updates it;
      // SQLite has one writer at a time. The key folds a null app into 0, so a null app matches a
      // null app. The row keeps its id; a new token without a refresh token keeps the stored one.
      try {
        const row = await translateConstraintViolations(db, dialect, () =>
          db
            .insertInto('latchkey_social_tokens')
            .values({
              account_id: input.accountId,
              app_id: input.appId,
              sealed_token: input.sealedToken,
              sealed_token_secret: input.sealedTokenSecret,
              expires_at: input.expiresAt === null ? null : toInstantColumn(input.expiresAt),
            })
            .onConflict((conflict) =>
              conflict.expression(TOKEN_KEY).doUpdateSet((eb) => ({
                sealed_token: eb.ref('excluded.sealed_token'),
                sealed_token_secret: eb
                  .case()
                  .when('excluded.sealed_token_secret', '=', '')
                  .then(eb.ref('latchkey_social_tokens.sealed_token_secret'))
                  .else(eb.ref('excluded.sealed_token_secret'))
                  .end(),
                expires_at: eb.ref('excluded.expires_at'),
              })),
            )
            .returningAll()
            .executeTakeFirstOrThrow(),
        );
        return toSocialToken(row);
      } catch (error) {
        // The foreign keys: the account (or the app) is gone, deleted a moment ago.
        if (isLatchkeyError(error, 'not_found')) throw new LatchkeyError('not_found', 'The social account or app does not exist.', { cause: error });
        throw error;
      }
    },

    async listForAccount(accountId: number): Promise<SocialToken[]> {
      const rows = await db.selectFrom('latchkey_social_tokens').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
      return rows.map(toSocialToken);
    },

    async search(query: SocialTokenSearch): Promise<ListedSocialToken[]> {
      // Whether each sealed value is set is decided by the database: the values never leave it.
      let select = db
        .selectFrom('latchkey_social_tokens as t')
        .innerJoin('latchkey_social_accounts as s', 's.id', 't.account_id')
        .innerJoin('latchkey_users as u', 'u.id', 's.user_id')
        .leftJoin('latchkey_social_apps as a', 'a.id', 't.app_id')
        .select([
          't.id',
          't.account_id',
          't.app_id',
          't.expires_at',
          's.provider',
          's.user_id',
          'a.name as app_name',
          'u.email as user_email',
          sql<number | boolean>`case when t.sealed_token <> '' then 1 else 0 end`.as('has_access_token'),
          sql<number | boolean>`case when t.sealed_token_secret <> '' then 1 else 0 end`.as('has_refresh_token'),
        ])
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select('u.username as user_username'));
      if (query.provider !== undefined) select = select.where('s.provider', '=', query.provider);
      if (query.accountId !== undefined) select = select.where('t.account_id', '=', query.accountId);
      if (query.afterId !== undefined) select = select.where('t.id', '<', query.afterId);
      const rows = await select.orderBy('t.id', 'desc').limit(query.limit).execute();
      return rows.map((row) => ({
        id: row.id,
        accountId: row.account_id,
        provider: row.provider,
        appId: row.app_id,
        appName: row.app_name ?? null,
        user: userLabelOf({ user_id: row.user_id, user_email: row.user_email, user_username: 'user_username' in row ? (row.user_username as string | null) : null }),
        hasAccessToken: Number(row.has_access_token) === 1,
        hasRefreshToken: Number(row.has_refresh_token) === 1,
        expiresAt: row.expires_at === null ? null : fromInstantColumn(row.expires_at),
      }));
    },
  };
}
