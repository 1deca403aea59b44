import { sql, type Kysely } from 'kysely';
import type { AccountImportTables, AccountImportTarget, ImportInserts } from '../../django-import/ports.js';
import type { DatabaseDialect } from './dialect.js';
import { adminPermissionImportTable, apiTokenImportTable, emailAddressImportTable, userImportTable } from './django-import-account-tables.js';
import type { Db } from './django-import-chunks.js';
import { authenticatorImportTable, socialAccountImportTable, socialAppImportTable, socialTokenImportTable } from './django-import-mfa-social-tables.js';
import type { DatabaseSchema } from './schema.js';
import type { UserShape } from './user-field-columns.js';

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
function analyzedAsTablesGrow(db: Db): (table: keyof DatabaseSchema, inserted: number) => Promise<void> {
  const written = new Map<string, number>();
  const analyzeAt = new Map<string, number>();
  return async (table, inserted) => {
    const count = (written.get(table) ?? 0) + inserted;
    written.set(table, count);
    if (count >= (analyzeAt.get(table) ?? 1000)) {
      await sql`analyze ${sql.table(table)}`.execute(db);
      analyzeAt.set(table, count * 4);
    }
  };
}

/** The table each kind is written to, whose statistics its INSERTs change. */
const TABLE_OF: Record<keyof AccountImportTables, keyof DatabaseSchema> = {
  users: 'latchkey_users',
  emailAddresses: 'latchkey_email_addresses',
  apiTokens: 'latchkey_api_tokens',
  authenticators: 'latchkey_authenticators',
  socialApps: 'latchkey_social_apps',
  socialAccounts: 'latchkey_social_accounts',
  socialTokens: 'latchkey_social_tokens',
  adminPermissions: 'latchkey_admin_permissions',
};

function importTables(db: Db, shape: UserShape): AccountImportTables {
  return {
    users: userImportTable(db, shape),
    emailAddresses: emailAddressImportTable(db),
    apiTokens: apiTokenImportTable(db),
    authenticators: authenticatorImportTable(db),
    socialApps: socialAppImportTable(db),
    socialAccounts: socialAccountImportTable(db),
    socialTokens: socialTokenImportTable(db),
    adminPermissions: adminPermissionImportTable(db),
  };
}

/** The tables with each INSERT followed by ANALYZE when its table has grown enough (PostgreSQL only). */
function analyzedAsTheyGrow(db: Db, tables: AccountImportTables): AccountImportTables {
  const grown = analyzedAsTablesGrow(db);
  const counted = (kind: keyof AccountImportTables, table: ImportInserts<unknown>): ImportInserts<unknown> => ({
    ...table,
    insert: async (rows) => {
      await table.insert(rows);
      await grown(TABLE_OF[kind], rows.length);
    },
  });
  const kinds = Object.keys(TABLE_OF) as (keyof AccountImportTables)[];
  return Object.fromEntries(kinds.map((kind) => [kind, counted(kind, tables[kind])])) as unknown as AccountImportTables;
}

/** Thrown inside a dry run's transaction to roll it back once the work is done. */
class DryRunRollback extends Error {}

/**
 * Latchkey's database as the import writes to it. `shape` is the database's: how its users sign
 * in, and the project's user fields, whose columns the imported users' values go to.
 */
export function createKyselyImportTarget(kysely: Kysely<DatabaseSchema>, dialect: DatabaseDialect, shape: UserShape): AccountImportTarget {
  return {
    async transaction<T>(dryRun: boolean, work: (tables: AccountImportTables) => Promise<T>): Promise<T> {
      let result: { value: T } | undefined;
      try {
        await kysely.transaction().execute(async (db) => {
          const tables = importTables(db, shape);
          result = { value: await work(dialect === 'postgres' ? analyzedAsTheyGrow(db, tables) : tables) };
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
