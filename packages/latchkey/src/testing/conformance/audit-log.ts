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
  });
}
