import type { Selectable } from 'kysely';
import { LatchkeyError } from '../../core/errors.js';
import type { NewSocialApp, SocialApp } from '../../socialaccount/model.js';
import type { SocialAppRepository } from '../../socialaccount/ports.js';
import { inTransaction, translateConstraintViolations, type Executor, type RepositoryContext } from './dialect.js';
import { fromJsonObjectColumn, type SocialAppsTable } from './schema.js';
import { isDuplicateTokenKey } from './social-tokens.js';

/** The unique constraint on (provider, provider_id), as PostgreSQL names it and as SQLite reports it. */
const POSTGRES_PROVIDER_UNIQUE = 'latchkey_social_apps_provider_unique';
const SQLITE_PROVIDER_UNIQUE = 'UNIQUE constraint failed: latchkey_social_apps.provider, latchkey_social_apps.provider_id';

/**
 * How often delete tries again when a parallel save gives an account of the app a detached token
 * between clearing the duplicates and detaching (PostgreSQL only; SQLite has one writer).
 */
const DELETE_ATTEMPTS = 3;

function toSocialApp(row: Selectable<SocialAppsTable>): SocialApp {
  return {
    id: row.id,
    provider: row.provider,
    providerId: row.provider_id,
    name: row.name,
    clientId: row.client_id,
    sealedSecret: row.sealed_secret,
    key: row.key,
    settings: fromJsonObjectColumn(row.settings),
  };
}

/** Whether a driver error is the refusal of a second app with one provider and provider id. */
function isDuplicateProvider(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  return (code === '23505' && constraint === POSTGRES_PROVIDER_UNIQUE) || (code === 'SQLITE_CONSTRAINT_UNIQUE' && message === SQLITE_PROVIDER_UNIQUE);
}

/**
 * Deletes the app, detaching its tokens (the foreign key sets their app_id to null). An account
 * holds one token per app, a null app included, so where an account already has a detached token
 * the app's own token would collide with it: that one goes, and the detached token stays.
 */
async function deleteDetachingTokens(trx: Executor, id: number): Promise<boolean> {
  await trx
    .deleteFrom('latchkey_social_tokens')
    .where('app_id', '=', id)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('latchkey_social_tokens as detached')
          .select(eb.lit(1).as('one'))
          .whereRef('detached.account_id', '=', 'latchkey_social_tokens.account_id')
          .where('detached.app_id', 'is', null),
      ),
    )
    .execute();
  const result = await trx.deleteFrom('latchkey_social_apps').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function createSocialAppRepository({ db, dialect }: RepositoryContext): SocialAppRepository {
  return {
    async create(input: NewSocialApp): Promise<SocialApp> {
      // The savepoint of translateConstraintViolations keeps a caller's PostgreSQL transaction
      // usable after the refusal; the unique constraint it does not know is translated here.
      try {
        const row = await translateConstraintViolations(db, dialect, () =>
          db
            .insertInto('latchkey_social_apps')
            .values({
              provider: input.provider,
              provider_id: input.providerId,
              name: input.name,
              client_id: input.clientId,
              sealed_secret: input.sealedSecret,
              key: input.key,
              settings: JSON.stringify(input.settings),
            })
            .returningAll()
            .executeTakeFirstOrThrow(),
        );
        return toSocialApp(row);
      } catch (error) {
        if (isDuplicateProvider(error)) {
          throw new LatchkeyError('social_app_exists', 'An app for this provider and provider id already exists.', { cause: error });
        }
        throw error;
      }
    },

    async list(): Promise<SocialApp[]> {
      const rows = await db.selectFrom('latchkey_social_apps').selectAll().orderBy('provider').orderBy('provider_id').orderBy('id').execute();
      return rows.map(toSocialApp);
    },

    async findById(id: number): Promise<SocialApp | undefined> {
      const row = await db.selectFrom('latchkey_social_apps').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : toSocialApp(row);
    },

    async update(id: number, changes: Partial<NewSocialApp>): Promise<SocialApp | undefined> {
      const values = {
        ...(changes.provider === undefined ? {} : { provider: changes.provider }),
        ...(changes.providerId === undefined ? {} : { provider_id: changes.providerId }),
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.clientId === undefined ? {} : { client_id: changes.clientId }),
        ...(changes.sealedSecret === undefined ? {} : { sealed_secret: changes.sealedSecret }),
        ...(changes.key === undefined ? {} : { key: changes.key }),
        ...(changes.settings === undefined ? {} : { settings: JSON.stringify(changes.settings) }),
      };
      if (Object.keys(values).length === 0) return this.findById(id);
      try {
        const row = await translateConstraintViolations(db, dialect, () =>
          db.updateTable('latchkey_social_apps').set(values).where('id', '=', id).returningAll().executeTakeFirst(),
        );
        return row === undefined ? undefined : toSocialApp(row);
      } catch (error) {
        if (isDuplicateProvider(error)) {
          throw new LatchkeyError('social_app_exists', 'An app for this provider and provider id already exists.', { cause: error });
        }
        throw error;
      }
    },

    async delete(id: number): Promise<boolean> {
      for (let attempt = 1; ; attempt += 1) {
        try {
          // The savepoint keeps a caller's PostgreSQL transaction usable for the next attempt.
          return await translateConstraintViolations(db, dialect, () => inTransaction(db, (trx) => deleteDetachingTokens(trx, id)));
        } catch (error) {
          // A parallel save gave one of the accounts a detached token after the duplicates were
          // cleared; the next attempt (a new statement, so it sees that token) clears it too.
          if (!isDuplicateTokenKey(error) || attempt >= DELETE_ATTEMPTS) throw error;
        }
      }
    },
  };
}
