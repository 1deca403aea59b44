import { sql, type Kysely } from 'kysely';
import type { AccountImportTarget, AccountImportWriter } from '../../django-import/ports.js';
import type { UsernameType } from '../../config/settings.js';
import type { DatabaseDialect } from './dialect.js';
import { adminPermissionRules, apiTokenRules, emailAddressRules, usersRules } from './django-import-account-rules.js';
import { authenticatorRules, socialAccountRules, socialAppRules, socialTokenRules } from './django-import-mfa-social-rules.js';
import { importRows, type Db } from './django-import-rows.js';
import type { DatabaseSchema } from './schema.js';

/** The tables whose ids come from a sequence on PostgreSQL (an identity column). */
const TABLES_WITH_IDS = ['latchkey_users', 'latchkey_email_addresses', 'latchkey_authenticators', 'latchkey_social_apps', 'latchkey_social_accounts', 'latchkey_social_tokens'] as const;

/**
 * Rows written with explicit ids leave PostgreSQL's identity sequence where it was, so the next
 * signup would be given an id an imported user has. Each sequence is moved to the largest id in
 * its table (never back). SQLite's AUTOINCREMENT keeps its counter past explicit ids by itself.
 */
async function moveSequencesPastIds(db: Db): Promise<void> {
  for (const table of TABLES_WITH_IDS) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), greatest(coalesce((select max(id) from ${sql.table(table)}), 1), coalesce(pg_sequence_last_value(pg_get_serial_sequence(${table}, 'id')), 1)))`.execute(db);
  }
}

/** Thrown inside a dry run's transaction to roll it back once the work is done. */
class DryRunRollback extends Error {}

export function createKyselyImportTarget(kysely: Kysely<DatabaseSchema>, dialect: DatabaseDialect, usernameType: UsernameType): AccountImportTarget {
  const users = usersRules(usernameType);
  return {
    async transaction<T>(dryRun: boolean, work: (writer: AccountImportWriter) => Promise<T>): Promise<T> {
      let result: { value: T } | undefined;
      try {
        await kysely.transaction().execute(async (db) => {
          const writer: AccountImportWriter = {
            users: (rows) => importRows(db, users, rows),
            emailAddresses: (rows) => importRows(db, emailAddressRules, rows),
            apiTokens: (rows) => importRows(db, apiTokenRules, rows),
            authenticators: (rows) => importRows(db, authenticatorRules, rows),
            socialApps: (rows) => importRows(db, socialAppRules, rows),
            socialAccounts: (rows) => importRows(db, socialAccountRules, rows),
            socialTokens: (rows) => importRows(db, socialTokenRules, rows),
            adminPermissions: (rows) => importRows(db, adminPermissionRules, rows),
          };
          result = { value: await work(writer) };
          if (dryRun) throw new DryRunRollback();
          if (dialect === 'postgres') await moveSequencesPastIds(db);
        });
      } catch (error) {
        if (!(error instanceof DryRunRollback)) throw error;
      }
      return result!.value;
    },
  };
}
