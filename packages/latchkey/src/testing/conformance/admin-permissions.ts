import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import type { AdminPermission } from '../../admin/model.js';
import { createUser, expectLatchkeyError, settleAll, useFreshDatabase, type ConformanceTarget } from './harness.js';

const VIEW_USERS: AdminPermission = { model: 'users.user', action: 'view' };
const CHANGE_USERS: AdminPermission = { model: 'users.user', action: 'change' };
const DELETE_SESSIONS: AdminPermission = { model: 'sessions.session', action: 'delete' };
const ADD_APPS: AdminPermission = { model: 'socialaccount.socialapp', action: 'add' };

export function describeAdminPermissionRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('AdminPermissionRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;
    const adminPermissions = () => database().store.adminPermissions;

    async function rowCount(): Promise<number> {
      const { rows } = await sql<{ count: number | string | bigint }>`select count(*) as count from latchkey_admin_permissions`.execute(database().kysely);
      return Number(rows[0]?.count);
    }

    it('has none for a new user, and lists what was set by model then action, in the order of the admin, not of the alphabet', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      expect(await adminPermissions().listForUser(jane.id)).toEqual([]);
      await adminPermissions().replaceForUser(jane.id, [DELETE_SESSIONS, CHANGE_USERS, ADD_APPS, VIEW_USERS]);
      expect(await adminPermissions().listForUser(jane.id)).toEqual([VIEW_USERS, CHANGE_USERS, ADD_APPS, DELETE_SESSIONS]);
    });

    it('replaces the whole set, counts a duplicate once, and clears with an empty one', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await adminPermissions().replaceForUser(jane.id, [VIEW_USERS, CHANGE_USERS]);
      await adminPermissions().replaceForUser(jane.id, [ADD_APPS, { ...ADD_APPS }, CHANGE_USERS]);
      expect(await adminPermissions().listForUser(jane.id)).toEqual([CHANGE_USERS, ADD_APPS]);
      expect(await rowCount()).toBe(2);
      await adminPermissions().replaceForUser(jane.id, []);
      expect(await adminPermissions().listForUser(jane.id)).toEqual([]);
      expect(await rowCount()).toBe(0);
    });

    it("keeps each user's permissions apart", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const bob = await createUser(store(), usernameType, 'bob');
      await adminPermissions().replaceForUser(jane.id, [VIEW_USERS]);
      await adminPermissions().replaceForUser(bob.id, [DELETE_SESSIONS]);
      await adminPermissions().replaceForUser(jane.id, [ADD_APPS]);
      expect(await adminPermissions().listForUser(jane.id)).toEqual([ADD_APPS]);
      expect(await adminPermissions().listForUser(bob.id)).toEqual([DELETE_SESSIONS]);
      expect(await adminPermissions().listForUser(bob.id + 1000)).toEqual([]);
    });

    it("refuses a missing user with 'not_found', whether or not there is anything to store", async () => {
      await expectLatchkeyError(adminPermissions().replaceForUser(1000, [VIEW_USERS]), 'not_found');
      await expectLatchkeyError(adminPermissions().replaceForUser(1000, []), 'not_found');
      expect(await rowCount()).toBe(0);
    });

    it('drops the permissions with the user', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await adminPermissions().replaceForUser(jane.id, [VIEW_USERS, ADD_APPS]);
      await store().users.delete(jane.id);
      expect(await rowCount()).toBe(0);
    });

    it('leaves out a stored row naming a model or action this version does not know', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await adminPermissions().replaceForUser(jane.id, [VIEW_USERS]);
      await sql`insert into latchkey_admin_permissions (user_id, model, action) values (${jane.id}, ${'retired.model'}, ${'view'}), (${jane.id}, ${'users.user'}, ${'export'})`.execute(
        database().kysely,
      );
      expect(await adminPermissions().listForUser(jane.id)).toEqual([VIEW_USERS]);
    });

    it('takes part in a store transaction: a rollback keeps the old set, and a refusal caught inside leaves it usable', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await adminPermissions().replaceForUser(jane.id, [VIEW_USERS]);
      const failed = store().transaction(async (repositories) => {
        await repositories.adminPermissions.replaceForUser(jane.id, [ADD_APPS]);
        expect(await repositories.adminPermissions.listForUser(jane.id)).toEqual([ADD_APPS]);
        throw new Error('rolled back');
      });
      await expect(failed).rejects.toThrow('rolled back');
      expect(await adminPermissions().listForUser(jane.id)).toEqual([VIEW_USERS]);

      await store().transaction(async (repositories) => {
        const refused = await repositories.adminPermissions.replaceForUser(jane.id + 1000, [ADD_APPS]).catch((error: unknown) => error);
        expect(isLatchkeyError(refused, 'not_found')).toBe(true);
        await repositories.adminPermissions.replaceForUser(jane.id, [DELETE_SESSIONS]);
      });
      expect(await adminPermissions().listForUser(jane.id)).toEqual([DELETE_SESSIONS]);
    });

    it('lets parallel replacements for one user leave exactly one of the sets, whole', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const sets: AdminPermission[][] = [[VIEW_USERS, CHANGE_USERS], [ADD_APPS], [DELETE_SESSIONS, VIEW_USERS], [CHANGE_USERS, ADD_APPS, DELETE_SESSIONS], []];
      const { codes } = await settleAll(Array.from({ length: 20 }, (_, index) => adminPermissions().replaceForUser(jane.id, sets[index % sets.length]!)));
      expect(codes).toEqual([]);
      const asText = (set: readonly AdminPermission[]): string => set.map(({ model, action }) => `${model}:${action}`).sort().join(' ');
      const stored = await adminPermissions().listForUser(jane.id);
      expect(sets.map(asText)).toContain(asText(stored));
      expect(await rowCount()).toBe(stored.length);
    });
  });
}
