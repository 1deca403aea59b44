import { describe, expect, it } from 'vitest';
import { createUser, useFreshDatabase, type ConformanceTarget } from './harness.js';

export function describeAuditLogRepository(target: ConformanceTarget): void {
  describe('audit log', () => {
    const database = useFreshDatabase(target);

    it("records events and lists a user's newest first, keeping them after the user is deleted", async () => {
      const { store } = database();
      const jane = await createUser(store, target.usernameType, 'jane');
      const base = { ipAddress: '2001:db8::1', userAgent: 'Chromium', data: { email: 'jane@example.com' } };
      await store.auditLog.record({ ...base, event: 'user_signed_up', userId: jane.id, createdAt: new Date('2030-01-01T00:00:00.000Z') });
      await store.auditLog.record({ ...base, event: 'user_logged_in', userId: jane.id, createdAt: new Date('2030-01-02T00:00:00.000Z') });
      await store.auditLog.record({ ...base, event: 'user_logged_out', userId: null, createdAt: new Date('2030-01-03T00:00:00.000Z') });
      const records = await store.auditLog.listForUser(jane.id);
      expect(records.map((record) => record.event)).toEqual(['user_logged_in', 'user_signed_up']);
      expect(records[0]).toMatchObject({ userId: jane.id, ipAddress: '2001:db8::1', userAgent: 'Chromium', data: { email: 'jane@example.com' } });
      expect(await store.auditLog.listForUser(jane.id, 1)).toHaveLength(1);
      await store.users.delete(jane.id);
      expect(await store.auditLog.listForUser(jane.id)).toHaveLength(2);
    });

    it('searches a page of the trail newest first with its users, by user and by event', async () => {
      const { store } = database();
      const jane = await createUser(store, target.usernameType, 'jane');
      const john = await createUser(store, target.usernameType, 'john');
      const base = { ipAddress: '198.51.100.4', userAgent: 'Firefox', createdAt: new Date('2030-01-01T00:00:00.000Z') };
      const signedUp = await store.auditLog.record({ ...base, event: 'user_signed_up', userId: jane.id, data: {} });
      const loggedIn = await store.auditLog.record({ ...base, event: 'user_logged_in', userId: jane.id, data: { method: 'password' } });
      const anonymous = await store.auditLog.record({ ...base, event: 'authentication_failed', userId: null, data: {} });
      const johns = await store.auditLog.record({ ...base, event: 'user_logged_in', userId: john.id, data: {} });
      const ids = (records: { id: number }[]) => records.map((record) => record.id);
      const all = await store.auditLog.search({ limit: 10 });
      expect(ids(all)).toEqual([johns.id, anonymous.id, loggedIn.id, signedUp.id]);
      expect(all[2]).toEqual({ ...loggedIn, user: { id: jane.id, username: target.usernameType === 'username' ? 'jane' : null, email: 'jane@example.com' }, targetUser: null });
      expect(all[1]?.user).toBeNull();
      expect(ids(await store.auditLog.search({ limit: 2 }))).toEqual([johns.id, anonymous.id]);
      expect(ids(await store.auditLog.search({ afterId: anonymous.id, limit: 2 }))).toEqual([loggedIn.id, signedUp.id]);
      expect(ids(await store.auditLog.search({ userId: jane.id, limit: 10 }))).toEqual([loggedIn.id, signedUp.id]);
      expect(ids(await store.auditLog.search({ event: 'user_logged_in', limit: 10 }))).toEqual([johns.id, loggedIn.id]);
      expect(ids(await store.auditLog.search({ event: 'user_logged_in', userId: jane.id, limit: 10 }))).toEqual([loggedIn.id]);
      // A deleted user's records stay, with no user to show.
      await store.users.delete(john.id);
      expect(await store.auditLog.search({ userId: john.id, limit: 10 })).toEqual([{ ...johns, user: null, targetUser: null }]);
    });

    it('finds an admin change by the user it was made to as well as by the staff member, naming both', async () => {
      const { store } = database();
      const root = await createUser(store, target.usernameType, 'root');
      const jane = await createUser(store, target.usernameType, 'jane');
      const base = { ipAddress: '198.51.100.4', userAgent: 'Firefox', createdAt: new Date('2030-01-01T00:00:00.000Z') };
      const own = await store.auditLog.record({ ...base, event: 'user_logged_in', userId: jane.id, data: {} });
      const change = await store.auditLog.record({ ...base, event: 'admin_user_changed', userId: root.id, targetUserId: jane.id, data: { target: jane.id } });
      const other = await store.auditLog.record({ ...base, event: 'user_logged_in', userId: root.id, data: {} });
      expect(change.targetUserId).toBe(jane.id);
      expect(own.targetUserId).toBeNull();
      const ids = (records: { id: number }[]) => records.map((record) => record.id);
      expect(ids(await store.auditLog.search({ userId: jane.id, limit: 10 }))).toEqual([change.id, own.id]);
      expect(ids(await store.auditLog.search({ userId: root.id, limit: 10 }))).toEqual([other.id, change.id]);
      expect(ids(await store.auditLog.search({ userId: jane.id, event: 'admin_user_changed', limit: 10 }))).toEqual([change.id]);
      expect(ids(await store.auditLog.search({ userId: jane.id, afterId: change.id, limit: 10 }))).toEqual([own.id]);
      const [found] = await store.auditLog.search({ userId: jane.id, limit: 1 });
      const labelOf = (user: { id: number; email: string | null }, name: string) => ({ id: user.id, username: target.usernameType === 'username' ? name : null, email: user.email });
      expect(found).toEqual({ ...change, user: labelOf(root, 'root'), targetUser: labelOf(jane, 'jane') });
      // The changed user deleted: the record stays, found by their id, with no one to name.
      await store.users.delete(jane.id);
      expect(await store.auditLog.search({ userId: jane.id, event: 'admin_user_changed', limit: 10 })).toEqual([{ ...change, user: labelOf(root, 'root'), targetUser: null }]);
    });
  });
}
