import { sql, type Kysely } from 'kysely';
import type { AccountImportTarget, AccountImportWriter, RowOutcome } from '../../django-import/ports.js';
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

/**
 * PostgreSQL plans each batch's checks (`where user_id in (...)`) from the tables' statistics,
 * which autovacuum cannot gather from rows not committed yet. Without them it takes the checks to
 * match most of the table and scans it whole for every batch, so a large import slows down as it
 * goes (88 of 109 seconds for a million email addresses). ANALYZE inside the transaction samples
 * its own rows: run as a table passes 1,000, then 4,000, 16,000, ... rows written, it costs
 * milliseconds and keeps every check an index lookup.
 */
function analyzedAsTablesGrow(db: Db): (table: keyof DatabaseSchema, outcomes: Promise<RowOutcome[]>) => Promise<RowOutcome[]> {
  const written = new Map<string, number>();
  const analyzeAt = new Map<string, number>();
  return async (table, pending) => {
    const outcomes = await pending;
    const count = (written.get(table) ?? 0) + outcomes.filter((outcome) => outcome === 'inserted').length;
    written.set(table, count);
    if (count >= (analyzeAt.get(table) ?? 1000)) {
      await sql`analyze ${sql.table(table)}`.execute(db);
      analyzeAt.set(table, count * 4);
    }
    return outcomes;
  };
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
          const grown = dialect === 'postgres' ? analyzedAsTablesGrow(db) : (_table: string, outcomes: Promise<RowOutcome[]>) => outcomes;
          const writer: AccountImportWriter = {
            users: (rows) => grown('latchkey_users', importRows(db, users, rows)),
            emailAddresses: (rows) => grown('latchkey_email_addresses', importRows(db, emailAddressRules, rows)),
            apiTokens: (rows) => grown('latchkey_api_tokens', importRows(db, apiTokenRules, rows)),
            authenticators: (rows) => grown('latchkey_authenticators', importRows(db, authenticatorRules, rows)),
            socialApps: (rows) => grown('latchkey_social_apps', importRows(db, socialAppRules, rows)),
            socialAccounts: (rows) => grown('latchkey_social_accounts', importRows(db, socialAccountRules, rows)),
            socialTokens: (rows) => grown('latchkey_social_tokens', importRows(db, socialTokenRules, rows)),
            adminPermissions: (rows) => grown('latchkey_admin_permissions', importRows(db, adminPermissionRules, rows)),
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
