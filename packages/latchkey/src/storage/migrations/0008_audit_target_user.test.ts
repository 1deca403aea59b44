/**
 * Migration 0008 on each database: the admin changes recorded before it get the user they were
 * made to from their data, so that the trail filtered by that user finds them; nothing else does.
 */
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, testDatabaseKinds } from '../../testing/database.js';
import { createMigrator } from './index.js';

describe.each(testDatabaseKinds())('migration 0008 (the audit trail’s changed user) on %s', (kind) => {
  it('fills in the changed user of the admin changes already recorded, and of nothing else', async () => {
    const database = await createTestDatabase(kind, 'username', { migrate: false });
    try {
      const migrator = await createMigrator(database.kysely, kind, 'username');
      expect((await migrator.migrateTo('0007_admin_indexes')).error).toBeUndefined();
      // Up to 0008 alone, so that later migrations do not change what this one is checked on.
      const migrateTo0008 = async (): Promise<void> => {
        const result = await migrator.migrateTo('0008_audit_target_user');
        expect(result.error).toBeUndefined();
        expect(result.results?.map((step) => `${step.direction} ${step.migrationName}`)).toEqual(['Up 0008_audit_target_user']);
      };
      const dateJoined = new Date('2024-01-01T00:00:00.000Z');
      const root = await database.store.users.create({ username: 'root', email: 'root@example.com', password: 'hash', isStaff: true, isSuperuser: true, dateJoined });
      const ada = await database.store.users.create({ username: 'ada', email: 'ada@example.com', password: 'hash', dateJoined });
      const db = database.kysely as Kysely<unknown>;
      const record = async (event: string, userId: number | null, data: string): Promise<number> => {
        const inserted = await sql<{ id: number }>`insert into latchkey_audit_log (event, user_id, created_at, ip_address, user_agent, data)
          values (${event}, ${userId}, ${'2025-01-02T03:04:05.678Z'}, ${'192.0.2.1'}, ${'legacy'}, ${data}) returning id`.execute(db);
        return inserted.rows[0]!.id;
      };
      const changed = await record('admin_user_changed', root.id, JSON.stringify({ target: ada.id, change: 'changed', fields: ['name'] }));
      const granted = await record('admin_permissions_changed', root.id, JSON.stringify({ target: ada.id, permissions: ['users.user:view'] }));
      const own = await record('user_logged_in', ada.id, JSON.stringify({ method: 'password' }));
      // Not an admin event, or a target that is not an id: left without a changed user.
      const stranger = await record('user_logged_in', root.id, JSON.stringify({ target: ada.id }));
      const text = await record('admin_user_changed', root.id, JSON.stringify({ target: String(ada.id) }));
      const fraction = await record('admin_user_changed', root.id, JSON.stringify({ target: ada.id + 0.5 }));
      const huge = await record('admin_user_changed', root.id, JSON.stringify({ target: 2 ** 40 }));
      const none = await record('admin_user_changed', root.id, JSON.stringify({ change: 'added' }));

      await migrateTo0008();
      const targets = await sql<{ id: number; target_user_id: number | null }>`select id, target_user_id from latchkey_audit_log order by id`.execute(db);
      expect(targets.rows.map((row) => [row.id, row.target_user_id])).toEqual([
        [changed, ada.id],
        [granted, ada.id],
        [own, null],
        [stranger, null],
        [text, null],
        [fraction, null],
        [huge, null],
        [none, null],
      ]);
      const adas = await database.store.auditLog.search({ userId: ada.id, limit: 10 });
      expect(adas.map((entry) => entry.id)).toEqual([own, granted, changed]);
      expect(adas[1]).toMatchObject({ userId: root.id, targetUserId: ada.id, user: { id: root.id, username: 'root' }, targetUser: { id: ada.id, username: 'ada' } });

      // Down and up again: the column goes, and comes back filled in the same way.
      expect((await migrator.migrateTo('0007_admin_indexes')).error).toBeUndefined();
      await migrateTo0008();
      expect((await database.store.auditLog.search({ userId: ada.id, limit: 10 })).map((entry) => entry.id)).toEqual([own, granted, changed]);
    } finally {
      await database.destroy();
    }
  });
});
