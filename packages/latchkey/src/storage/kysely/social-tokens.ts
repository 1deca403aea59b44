import { sql, type Selectable } from 'kysely';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { NewSocialToken, SocialToken } from '../../socialaccount/model.js';
import type { SocialTokenRepository } from '../../socialaccount/ports.js';
import { translateConstraintViolations, type RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type SocialTokensTable } from './schema.js';

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

export function createSocialTokenRepository({ db, dialect }: RepositoryContext): SocialTokenRepository {
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
  };
}
