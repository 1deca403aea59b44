/**
 * Migrated PostgreSQL schemas, reused across the tests of a run. Creating a schema and running
 * every migration costs a test about 0.4 s, hundreds of times a run; emptying one costs a tenth of
 * that. So a test's schema, once the test is done, is emptied and listed in a table of the test
 * database's public schema, and the next test that wants one for the same username type and the
 * same migrations claims it from there. The list is shared by every test process of the run (and
 * of any other run on the same database); a claim takes its row with SKIP LOCKED, so two
 * processes never get the same schema. The run's global teardown drops what is left.
 */
import pg from 'pg';
import type { UsernameType } from '../config/settings.js';
import { latchkeyMigrations, MIGRATION_LOCK_TABLE, MIGRATION_TABLE } from '../storage/migrations/index.js';
import { PROJECT_MIGRATION_TABLE } from '../storage/migrations/project.js';

const POOL_TABLE = 'latchkey_test_schema_pool';
/** Tables that hold what migrating wrote, not what a test did: kept when a schema is emptied. */
const MIGRATION_STATE_TABLES = ['latchkey_meta', MIGRATION_TABLE, MIGRATION_LOCK_TABLE];

const connections = new Map<string, pg.Pool>();

/** A statement on the test database's own connections (not a test's schema). */
async function adminQuery(url: string, statement: string, values: unknown[] = []): Promise<pg.QueryResult> {
  let pool = connections.get(url);
  if (pool === undefined) {
    // Idle connections close at once, so a test process is never kept alive by them.
    pool = new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 200, allowExitOnIdle: true, connectionTimeoutMillis: 5000 });
    connections.set(url, pool);
  }
  return pool.query(statement, values);
}

/** What a pooled schema must match to be reused: the username type and the newest migration. */
function poolKey(usernameType: UsernameType): string {
  const newest = Object.keys(latchkeyMigrations('postgres', usernameType)).at(-1)!;
  return `${usernameType}:${newest}`;
}

function isMissingTable(error: unknown): boolean {
  return (error as { code?: string }).code === '42P01';
}

/** An emptied, migrated schema for this username type, or undefined when none is free. */
export async function claimPooledSchema(url: string, usernameType: UsernameType): Promise<string | undefined> {
  try {
    const claimed = await adminQuery(
      url,
      `delete from ${POOL_TABLE} where schema_name = (select schema_name from ${POOL_TABLE} where pool_key = $1 limit 1 for update skip locked) returning schema_name`,
      [poolKey(usernameType)],
    );
    return (claimed.rows[0] as { schema_name: string } | undefined)?.schema_name;
  } catch (error) {
    if (isMissingTable(error)) return undefined;
    throw error;
  }
}

/**
 * Empties a test's schema (every table but the migration state, identities restarted) and lists it
 * as free. False when the schema is no longer as migrating left it (its username type or newest
 * migration changed), so the caller drops it instead.
 */
export async function returnSchemaToPool(url: string, schema: string, usernameType: UsernameType): Promise<boolean> {
  const kept = MIGRATION_STATE_TABLES.map((table) => `'${table}'`).join(', ');
  // The schema's name is our own `lk_test_<hex>`, safe to splice into the statement.
  // DELETE, not TRUNCATE: a test leaves a few rows, and TRUNCATE's new files for every table and
  // index cost more than deleting them. Foreign keys are not checked while emptying everything
  // (replica mode), and identities start again at 1, as in a new schema.
  await adminQuery(
    url,
    `do $$
     declare item record;
     begin
       set local session_replication_role = replica;
       for item in select tablename from pg_tables where schemaname = '${schema}' and tablename not in (${kept}) loop
         execute format('delete from %I.%I', '${schema}', item.tablename);
       end loop;
       for item in select sequencename from pg_sequences where schemaname = '${schema}' loop
         execute format('alter sequence %I.%I restart', '${schema}', item.sequencename);
       end loop;
     end $$`,
  );
  const [type, newest] = poolKey(usernameType).split(':');
  // A schema a project's migrations have added tables to is not Latchkey's alone any more: dropped.
  const stillMigrated = `exists (select 1 from ${schema}.latchkey_meta where name = 'username_type' and value = $3)
    and (select max(name) from ${schema}.${MIGRATION_TABLE}) = $4
    and not exists (select 1 from pg_tables where schemaname = '${schema}' and tablename = '${PROJECT_MIGRATION_TABLE}')`;
  const listing = `insert into ${POOL_TABLE} (schema_name, pool_key) select $1, $2 where ${stillMigrated}`;
  const values = [schema, poolKey(usernameType), type, newest];
  await ensurePoolTable(url);
  try {
    return (await adminQuery(url, listing, values)).rowCount === 1;
  } catch {
    // A test dropped or damaged a table the check reads: not reusable.
    return false;
  }
}

const poolTables = new Map<string, Promise<void>>();

/** The list of free schemas, created by the first process that needs it. */
function ensurePoolTable(url: string): Promise<void> {
  let created = poolTables.get(url);
  if (created === undefined) {
    // Two processes creating it at once: the loser's unique violation means it exists.
    created = adminQuery(url, `create table if not exists ${POOL_TABLE} (schema_name text primary key, pool_key text not null)`).then(
      () => undefined,
      (error: { code?: string }) => {
        if (error.code !== '23505' && error.code !== '42P07') throw error;
      },
    );
    poolTables.set(url, created);
  }
  return created;
}

/** Drops every free schema (the run's end). Schemas claimed by a run still going are not listed. */
export async function dropPooledSchemas(url: string): Promise<void> {
  try {
    const drained = await adminQuery(url, `delete from ${POOL_TABLE} returning schema_name`);
    for (const { schema_name: schema } of drained.rows as { schema_name: string }[]) {
      await adminQuery(url, `drop schema if exists ${schema} cascade`);
    }
  } catch (error) {
    if (!isMissingTable(error)) throw error;
  } finally {
    await connections.get(url)?.end();
    connections.delete(url);
  }
}
