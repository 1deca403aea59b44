import { sql, type Selectable } from 'kysely';
import { normalizeEmail, tryNormalizeEmail } from '../../core/identifiers.js';
import type { EmailAddress, NewEmailAddress } from '../../account/model.js';
import type { EmailAddressRepository, EmailAddressSearch, ListedEmailAddress } from '../../account/ports.js';
import { inTransaction, lockUserRow, translateConstraintViolations, type Executor, type RepositoryContext } from './dialect.js';
import { startsWith } from './like.js';
import { userLabelOf, userStartsWith } from './user-labels.js';
import { toBooleanColumn, type EmailAddressesTable } from './schema.js';

function toEmailAddress(row: Selectable<EmailAddressesTable>): EmailAddress {
  return {
    id: row.id,
    userId: row.user_id,
    email: row.email,
    verified: Boolean(row.verified),
    primary: Boolean(row.is_primary),
  };
}

/**
 * Makes `id` the user's only primary address and copies it to the user's own email column. The
 * caller holds the user's row lock, and the other rows are cleared before this one is set, because
 * the partial unique index on (user_id) WHERE is_primary is checked row by row.
 */
async function makeOnlyPrimary(trx: Executor, userId: number, id: number, email: string): Promise<void> {
  await trx
    .updateTable('latchkey_email_addresses')
    .set({ is_primary: 0 })
    .where('user_id', '=', userId)
    .where('is_primary', '=', 1)
    .where('id', '!=', id)
    .execute();
  await trx.updateTable('latchkey_email_addresses').set({ is_primary: 1 }).where('id', '=', id).execute();
  await trx.updateTable('latchkey_users').set({ email }).where('id', '=', userId).execute();
}

export function createEmailAddressRepository({ db, dialect, usernameType }: RepositoryContext): EmailAddressRepository {
  async function findById(id: number): Promise<EmailAddress | undefined> {
    const row = await db.selectFrom('latchkey_email_addresses').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toEmailAddress(row);
  }

  return {
    async add(input: NewEmailAddress): Promise<EmailAddress> {
      // Normalized here as well as by the caller: the unique indexes compare stored strings, so an
      // unnormalized spelling would slip past "verified by one user only".
      const email = normalizeEmail(input.email);
      return translateConstraintViolations(db, dialect, () =>
        inTransaction(db, async (trx) => {
          if (input.primary) {
            await lockUserRow(trx, dialect, input.userId);
          }
          const row = await trx
            .insertInto('latchkey_email_addresses')
            .values({ user_id: input.userId, email, verified: toBooleanColumn(input.verified), is_primary: 0 })
            .returningAll()
            .executeTakeFirstOrThrow();
          if (!input.primary) {
            return toEmailAddress(row);
          }
          await makeOnlyPrimary(trx, input.userId, row.id, email);
          return { ...toEmailAddress(row), primary: true };
        }),
      );
    },

    findById,

    async findForUser(userId: number, email: string): Promise<EmailAddress | undefined> {
      const normalized = tryNormalizeEmail(email);
      if (normalized === undefined) {
        return undefined;
      }
      const row = await db
        .selectFrom('latchkey_email_addresses')
        .selectAll()
        .where('user_id', '=', userId)
        .where('email', '=', normalized)
        .executeTakeFirst();
      return row === undefined ? undefined : toEmailAddress(row);
    },

    async listForUser(userId: number): Promise<EmailAddress[]> {
      const rows = await db
        .selectFrom('latchkey_email_addresses')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('is_primary', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(toEmailAddress);
    },

    async claimAddress(email: string): Promise<void> {
      if (dialect !== 'postgres') return;
      // Transaction-scoped: released by the commit or rollback. The key is a 64-bit hash of the
      // normalized address; two addresses sharing a hash only wait for each other.
      const key = `latchkey.email:${tryNormalizeEmail(email) ?? email}`;
      await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db);
    },

    async listByEmail(email: string): Promise<EmailAddress[]> {
      const normalized = tryNormalizeEmail(email);
      if (normalized === undefined) {
        return [];
      }
      const rows = await db.selectFrom('latchkey_email_addresses').selectAll().where('email', '=', normalized).orderBy('id').execute();
      return rows.map(toEmailAddress);
    },

    async findVerified(email: string): Promise<EmailAddress | undefined> {
      const normalized = tryNormalizeEmail(email);
      if (normalized === undefined) {
        return undefined;
      }
      const row = await db
        .selectFrom('latchkey_email_addresses')
        .selectAll()
        .where('email', '=', normalized)
        .where('verified', '=', 1)
        .executeTakeFirst();
      return row === undefined ? undefined : toEmailAddress(row);
    },

    async markVerified(id: number, options: { unverifiedOnly?: boolean } = {}): Promise<EmailAddress | undefined> {
      // The partial unique index on (email) WHERE verified decides races: of two users verifying
      // the same address at once, exactly one succeeds and the other gets 'email_taken'. Two uses
      // of one key race on the same row: the condition is checked again once the first update has
      // committed (PostgreSQL re-reads a row it waited for; SQLite runs one writer at a time), so
      // the second finds the address verified and changes nothing.
      let update = db.updateTable('latchkey_email_addresses').set({ verified: 1 }).where('id', '=', id);
      if (options.unverifiedOnly === true) update = update.where('verified', '=', toBooleanColumn(false));
      const row = await translateConstraintViolations(db, dialect, () => update.returningAll().executeTakeFirst());
      return row === undefined ? undefined : toEmailAddress(row);
    },

    async setPrimary(userId: number, id: number): Promise<EmailAddress | undefined> {
      return translateConstraintViolations(db, dialect, () =>
        inTransaction(db, async (trx) => {
          await lockUserRow(trx, dialect, userId);
          const row = await trx
            .selectFrom('latchkey_email_addresses')
            .selectAll()
            .where('id', '=', id)
            .where('user_id', '=', userId)
            .executeTakeFirst();
          if (row === undefined) {
            return undefined;
          }
          await makeOnlyPrimary(trx, userId, id, row.email);
          return { ...toEmailAddress(row), primary: true };
        }),
      );
    },

    async remove(id: number): Promise<boolean> {
      const result = await db.deleteFrom('latchkey_email_addresses').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async search(query: EmailAddressSearch): Promise<ListedEmailAddress[]> {
      if (query.ids !== undefined && query.ids.length === 0) return [];
      let select = db
        .selectFrom('latchkey_email_addresses as a')
        .innerJoin('latchkey_users as u', 'u.id', 'a.user_id')
        .selectAll('a')
        .select('u.email as user_email')
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select('u.username as user_username'));
      const text = query.text?.trim() ?? '';
      if (text !== '') select = select.where((eb) => eb.or([startsWith('a.email', text.toLowerCase()), userStartsWith(text, usernameType)]));
      if (query.primary !== undefined) select = select.where('a.is_primary', '=', toBooleanColumn(query.primary));
      if (query.verified !== undefined) select = select.where('a.verified', '=', toBooleanColumn(query.verified));
      if (query.ids !== undefined) select = select.where('a.id', 'in', [...query.ids]);
      if (query.afterId !== undefined) select = select.where('a.id', '<', query.afterId);
      const rows = await select.orderBy('a.id', 'desc').limit(query.limit).execute();
      return rows.map((row) => ({ ...toEmailAddress(row), user: userLabelOf(row) }));
    },
  };
}
