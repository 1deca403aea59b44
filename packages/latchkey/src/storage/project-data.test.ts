/**
 * The project's own tables beside Latchkey's (docs/project-data.md): its migrations, applied after
 * Latchkey's and held to the same rule; typed access through `latchkey.db()`; and the adapter's
 * hooks, which write the project's rows in the transaction of the change they are called in.
 */
import { sql, type Generated, type Kysely } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccountAdapter } from '../account/adapter.js';
import { signup } from '../account/flows/signup.js';
import type { User } from '../account/model.js';
import { deleteUserByAdmin } from '../admin/flows/manage-users.js';
import { isLatchkeyError } from '../core/errors.js';
import { openLatchkey } from '../latchkey.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../testing/latchkey.js';
import type { ProjectMigration, ProjectMigrations } from './migrations/project.js';

/** The worked example of docs/project-data.md: a notes table owned by the user (a `type`, as Kysely's withTables wants). */
type ProjectTables = {
  notes: { id: Generated<number>; user_id: number; body: string; archived: Generated<number> };
};

const createNotes: ProjectMigration = {
  async up(db, { dialect }) {
    await db.schema
      .createTable('notes')
      .addColumn('id', dialect === 'postgres' ? 'serial' : 'integer', (column) => column.primaryKey())
      .addColumn('user_id', 'integer', (column) => column.notNull().references('latchkey_users.id').onDelete('cascade'))
      .addColumn('body', 'text', (column) => column.notNull())
      .execute();
  },
  async down(db) {
    await db.schema.dropTable('notes').execute();
  },
};
const addArchived: ProjectMigration = {
  async up(db) {
    await db.schema.alterTable('notes').addColumn('archived', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  },
};
const MIGRATIONS: ProjectMigrations = { '20261203_090000_create_notes': createNotes, '20261203_091500_add_archived': addArchived };

/** The project's adapter: a welcome note for every new account, archived notes for a deactivated one. */
class NotesAdapter extends AccountAdapter {
  refuseNewAccounts = false;

  override async onUserCreated(user: User, db: Kysely<object>): Promise<void> {
    await db.withTables<ProjectTables>().insertInto('notes').values({ user_id: user.id, body: `Welcome, ${user.username ?? user.email}` }).execute();
    if (this.refuseNewAccounts) throw new Error('the notes service refuses');
  }

  override async onUserDeactivated(user: User, db: Kysely<object>): Promise<void> {
    await db.withTables<ProjectTables>().updateTable('notes').set({ archived: 1 }).where('user_id', '=', user.id).execute();
  }
}

describe.each(testDatabaseKinds())("the project's own tables on %s", (kind) => {
  let database: TestDatabase | undefined;
  let latchkey: TestLatchkey | undefined;
  afterEach(async () => {
    await latchkey?.destroy();
    await database?.destroy();
    latchkey = undefined;
    database = undefined;
  });

  it("applies the project's migrations after Latchkey's, in name order, once, in a bookkeeping table of their own", async () => {
    database = await createTestDatabase(kind, 'username');
    expect(await database.pendingMigrations(MIGRATIONS)).toEqual(['20261203_090000_create_notes', '20261203_091500_add_archived']);
    expect(await database.migrate(MIGRATIONS)).toEqual(['20261203_090000_create_notes', '20261203_091500_add_archived']);
    expect(await database.migrate(MIGRATIONS)).toEqual([]);
    expect(await database.pendingMigrations(MIGRATIONS)).toEqual([]);
    const recorded = await sql<{ name: string }>`select name from project_migrations order by name`.execute(database.kysely);
    expect(recorded.rows.map((row) => row.name)).toEqual(Object.keys(MIGRATIONS));
    const latchkeys = await sql<{ name: string }>`select name from latchkey_migrations where name like '2026%'`.execute(database.kysely);
    expect(latchkeys.rows).toEqual([]);
    // A migration written later is the only one pending.
    const later = { ...MIGRATIONS, '20261204_080000_index_notes': { up: (db: Kysely<object>) => db.schema.createIndex('notes_user').on('notes').column('user_id').execute() } };
    expect(await database.pendingMigrations(later)).toEqual(['20261204_080000_index_notes']);
  });

  it('rolls a failed migration back and says which in one line, leaving the ones before it applied', async () => {
    database = await createTestDatabase(kind, 'username');
    const broken: ProjectMigration = {
      async up(db) {
        await db.schema.createTable('half_done').addColumn('id', 'integer').execute();
        await sql`select * from no_such_table`.execute(db);
      },
    };
    const error = await database.migrate({ ...MIGRATIONS, '20261203_100000_broken': broken }).catch((caught: unknown) => caught);
    expect(isLatchkeyError(error)).toBe(true);
    expect((error as Error).message).toMatch(/^Migration 20261203_100000_broken failed on .*no_such_table/);
    expect((error as Error).message).not.toContain('\n');
    expect(await database.pendingMigrations(MIGRATIONS)).toEqual([]);
    const tables = await database.kysely.introspection.getTables();
    expect(tables.map((table) => table.name)).not.toContain('half_done');
  });

  it('refuses a migration name that would not sort by date, before anything is applied', async () => {
    database = await createTestDatabase(kind, 'username');
    const error = await database.migrate({ create_notes: createNotes }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe('The project\'s migration "create_notes" is not named as manage makemigration names them (YYYYMMDD_HHMMSS_words): its place in the order would be a guess.');
    expect((await database.kysely.introspection.getTables()).map((table) => table.name)).not.toContain('notes');
  });

  it("refuses to start outside local mode while one of the project's migrations is pending, naming it", async () => {
    database = await createTestDatabase(kind, 'username');
    const settings = testSettings();
    const refused = await openLatchkey({ settings, database, migrations: 'require', projectMigrations: MIGRATIONS }).catch((caught: unknown) => caught);
    expect((refused as Error).message).toBe(
      'The database is not up to date (2 migration(s) pending: 20261203_090000_create_notes, 20261203_091500_add_archived). Run: npm run manage -- migrate',
    );
  });

  it("writes the project's rows in the transaction that creates, deactivates or deletes an account", async () => {
    const adapter = new NotesAdapter(testSettings());
    latchkey = await createTestLatchkey({ kind, projectMigrations: MIGRATIONS, adapter: () => adapter });
    const db = latchkey.db<ProjectTables>();
    const notesOf = (user: User) => db.selectFrom('notes').select(['body', 'archived']).where('user_id', '=', user.id).execute();

    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    expect(await notesOf(ada)).toEqual([{ body: 'Welcome, ada', archived: 0 }]);

    // A hook that throws refuses the whole account: no user, no address, no note.
    adapter.refuseNewAccounts = true;
    await expect(latchkey.users.create({ username: 'bob', email: 'bob@example.com', password: null, emailVerified: true })).rejects.toThrow('the notes service refuses');
    expect(await latchkey.users.findByUsername('bob')).toBeUndefined();
    expect(await db.selectFrom('notes').select('body').execute()).toEqual([{ body: 'Welcome, ada' }]);
    adapter.refuseNewAccounts = false;

    await latchkey.users.deactivate(ada);
    expect(await notesOf(ada)).toEqual([{ body: 'Welcome, ada', archived: 1 }]);

    // Deleted by staff: the note goes with the account (the table's foreign key cascades).
    const root = await latchkey.users.create({ username: 'root', email: 'root@example.com', password: null, emailVerified: true, isSuperuser: true, isStaff: true });
    await deleteUserByAdmin(latchkey.deps, root, ada, { ip: '127.0.0.1', userAgent: 'test' }, latchkey.clock.now());
    expect(await notesOf(ada)).toEqual([]);
    expect(await db.selectFrom('notes').select('body').execute()).toEqual([{ body: 'Welcome, root' }]);
  });

  it("runs onUserCreated in a signup's rehearsal for a registered address too, and keeps nothing of it", async () => {
    const adapter = new NotesAdapter(testSettings());
    latchkey = await createTestLatchkey({ kind, projectMigrations: MIGRATIONS, adapter: () => adapter, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    const created = vi.spyOn(adapter, 'onUserCreated');
    const client = { ip: '192.0.2.1', userAgent: 'test' };
    const form = (username: string) => ({ email: 'ada@example.com', username, password1: 'a long enough passphrase', password2: 'a long enough passphrase', client });
    expect((await signup(latchkey.deps, form('ada'))).status).toBe('verification_sent');
    // The same address again: the same answer, the same work (the hook included), rolled back.
    expect((await signup(latchkey.deps, form('ada2'))).status).toBe('verification_sent');
    expect(created).toHaveBeenCalledTimes(2);
    expect(await latchkey.db<ProjectTables>().selectFrom('notes').select('body').execute()).toEqual([{ body: 'Welcome, ada' }]);
    expect(await latchkey.users.count()).toBe(1);
  });

  it('calls onUserDeleting before the account goes, and keeps the account when it throws', async () => {
    class GuardedAdapter extends AccountAdapter {
      override async onUserDeleting(user: User, db: Kysely<object>): Promise<void> {
        const open = await db.withTables<ProjectTables>().selectFrom('notes').select('id').where('user_id', '=', user.id).where('archived', '=', 0).execute();
        if (open.length > 0) throw new Error(`${user.username ?? ''} still has open notes`);
      }
    }
    latchkey = await createTestLatchkey({ kind, projectMigrations: MIGRATIONS, adapter: (settings) => new GuardedAdapter(settings) });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: null, emailVerified: true });
    const root = await latchkey.users.create({ username: 'root', email: 'root@example.com', password: null, emailVerified: true, isSuperuser: true, isStaff: true });
    await latchkey.db<ProjectTables>().insertInto('notes').values({ user_id: grace.id, body: 'open' }).execute();
    await expect(deleteUserByAdmin(latchkey.deps, root, grace, { ip: '127.0.0.1', userAgent: 'test' }, latchkey.clock.now())).rejects.toThrow('grace still has open notes');
    expect(await latchkey.users.findById(grace.id)).toBeDefined();
    const auditRows = await latchkey.database.kysely.selectFrom('latchkey_audit_log').select('event').where('event', '=', 'admin_user_changed').execute();
    expect(auditRows).toEqual([]);
  });
});
