/**
 * The admin's users search is written on the very expressions migration 0007 indexes, and each
 * database's planner says so: every order reads its index (no sort step, and a later page enters
 * it in the middle), inactive users theirs, and a search by text reads one index range per field
 * it looks in. An edit
 * to either side that lost the match would pass every other test and scan a million rows.
 */
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { UserOrder, UserSearch } from '../../account/ports.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../../testing/database.js';
import type { DatabaseDialect } from './dialect.js';
import { addUserFieldSearchIndex, dropUserFieldSearchIndex, userSearchQuery } from './user-search.js';
import type { UserField } from '../../core/user-fields.js';
import { addUserFieldColumn, dropUserFieldColumn } from '../migrations/project.js';
import { TEST_USER_FIELDS } from '../../testing/user-fields.js';

const ORDER_INDEX: Record<string, string | undefined> = {
  username: 'latchkey_users_username_order',
  email: 'latchkey_users_email_order',
  name: 'latchkey_users_name_order',
  date_joined: 'latchkey_users_date_joined_order',
  id: undefined,
};

const SEARCH_INDEXES = ['latchkey_users_username_order', 'latchkey_users_email_order', 'latchkey_users_name_order', 'latchkey_users_name_tail_prefix'];

interface Plan {
  /** Each step's description: SQLite's lines, or PostgreSQL's node types with their index names. */
  steps: string[];
  indexes: string[];
}

interface PostgresNode {
  'Node Type': string;
  'Parent Relationship'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PostgresNode[];
}

/** The plan's nodes, leaving out the InitPlans that read the previous page's last user by id. */
function flatten(node: PostgresNode): PostgresNode[] {
  return [node, ...(node.Plans ?? []).filter((child) => child['Parent Relationship'] !== 'InitPlan').flatMap(flatten)];
}

/**
 * The planner's choice for one page. On PostgreSQL, sequential scans (and, for an order, sorts)
 * are priced out, as a million rows would price them: the test tables are nearly empty, where a
 * scan is cheapest, but what matters is whether an index can serve at all.
 */
async function planOf(database: TestDatabase, dialect: DatabaseDialect, search: UserSearch, options: { sorted: boolean; userFields?: readonly UserField[] }): Promise<Plan> {
  const compiled = userSearchQuery({ db: database.kysely, dialect, usernameType: 'username', userFields: options.userFields ?? [] }, search).compile();
  if (dialect === 'sqlite') {
    const result = await database.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
    const steps = result.rows.map((row) => row.detail);
    return { steps, indexes: steps.flatMap((step) => /USING INDEX (\w+)/.exec(step)?.[1] ?? []) };
  }
  return database.kysely.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    if (options.sorted) await sql`set local enable_sort = off`.execute(trx);
    else await sql`set local enable_indexscan = off`.execute(trx);
    const result = await trx.executeQuery<{ 'QUERY PLAN': [{ Plan: PostgresNode }] }>(CompiledQuery.raw(`explain (format json) ${compiled.sql}`, [...compiled.parameters]));
    const nodes = flatten(result.rows[0]!['QUERY PLAN'][0].Plan);
    return {
      steps: nodes.map((node) => `${node['Node Type']}${node['Index Cond'] ? ` (${node['Index Cond']})` : ''}`),
      indexes: nodes.flatMap((node) => node['Index Name'] ?? []),
    };
  });
}

describe.each(testDatabaseKinds())('the users search’s plans on %s', (dialect) => {
  let database: TestDatabase;
  afterEach(() => database.destroy());

  it('reads every order from its index, both ways, a later page entering it in the middle; for inactive users, from its inactive twin', async () => {
    database = await createTestDatabase(dialect, 'username');
    for (const [field, index] of Object.entries(ORDER_INDEX)) {
      for (const order of [field, `-${field}`] as UserOrder[]) {
        for (const [afterId, inactive] of [[undefined, false], [42, false], [undefined, true], [42, true]] as const) {
          const search: UserSearch = { order, limit: 101, ...(afterId === undefined ? {} : { afterId }), ...(inactive ? { isActive: false } : {}) };
          const plan = await planOf(database, dialect, search, { sorted: true });
          const context = `${order} after ${String(afterId)}${inactive ? ', inactive' : ''}: ${plan.steps.join('; ')}`;
          const scan = dialect === 'sqlite' ? plan.steps[0]! : plan.steps.find((step) => step.startsWith('Index'))!;
          if (inactive) expect(plan.indexes[0], context).toBe((index ?? 'latchkey_users_ids').replace('latchkey_users_', 'latchkey_users_inactive_'));
          else if (index === undefined) expect(scan, context).toMatch(dialect === 'sqlite' ? /latchkey_users/ : /^Index Scan/);
          else expect(plan.indexes[0], context).toBe(index);
          expect(plan.steps.join('; '), context).not.toMatch(/TEMP B-TREE|^Sort|; Sort|Seq Scan/);
          // A later page starts in the middle of the index rather than reading it from its start.
          if (afterId !== undefined) expect(scan, context).toMatch(dialect === 'sqlite' ? /^SEARCH/ : /\(.*[<>]/);
        }
      }
    }
  });

  it('searches one index range per field: username, address, name and the name after its first space', async () => {
    database = await createTestDatabase(dialect, 'username');
    for (const order of ['-id', 'name'] as UserOrder[]) {
      const plan = await planOf(database, dialect, { text: 'ada', order, limit: 101 }, { sorted: false });
      const context = `${order}: ${plan.steps.join('; ')}`;
      expect([...plan.indexes].sort(), context).toEqual([...SEARCH_INDEXES].sort());
      expect(plan.steps.join('; '), context).not.toMatch(/^SCAN|Seq Scan/);
    }
  });

  it('searches a project field the admin searches (company) in one more range, of the index made for it; its filters keep every order’s index', async () => {
    database = await createTestDatabase(dialect, 'username');
    // The project's columns, and the search index its migration makes for company (admin.search).
    const projectDb = database.kysely as unknown as Kysely<object>;
    for (const field of TEST_USER_FIELDS.fields) await addUserFieldColumn(projectDb, { dialect }, field.name, field.type);
    await addUserFieldSearchIndex(projectDb, dialect, 'company');
    // The test database goes back to a pool of Latchkey's own schemas: it leaves as it came.
    try {
      const userFields = TEST_USER_FIELDS.fields;
      for (const order of ['-id', 'id', 'name', '-date_joined'] as UserOrder[]) {
        const plan = await planOf(database, dialect, { text: 'ada', order, limit: 101 }, { sorted: false, userFields });
        const context = `${order}: ${plan.steps.join('; ')}`;
        expect([...plan.indexes].sort(), context).toEqual([...SEARCH_INDEXES, 'latchkey_users_company_search'].sort());
        expect(plan.steps.join('; '), context).not.toMatch(/^SCAN|Seq Scan/);
      }
      for (const [field, index] of Object.entries(ORDER_INDEX)) {
        const search: UserSearch = { order: field as UserOrder, limit: 101, userFields: { plan: 'team', newsletter: true } };
        const plan = await planOf(database, dialect, search, { sorted: true, userFields });
        const context = `${field}: ${plan.steps.join('; ')}`;
        if (index !== undefined) expect(plan.indexes[0], context).toBe(index);
        expect(plan.steps.join('; '), context).not.toMatch(/TEMP B-TREE|^Sort|; Sort|Seq Scan/);
      }
    } finally {
      await dropUserFieldSearchIndex(projectDb, 'company');
      for (const field of TEST_USER_FIELDS.fields) await dropUserFieldColumn(projectDb, field.name);
    }
  });
});
