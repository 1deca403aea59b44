/**
 * The admin's user flows on each database, called as any door would call them: which changes need
 * a recent sign-in (and which do not), that a refusal changes nothing, and that a save is one
 * transaction.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import type { Store } from '../../store.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { setAdminPermissions } from '../access.js';
import type { AdminPermission } from '../model.js';
import { changeUserByAdmin, deleteUserByAdmin, setPasswordByAdmin, type UserChangesByAdmin } from './manage-users.js';

const VIEW_USERS: AdminPermission[] = [{ model: 'users.user', action: 'view' }];

describe.each(testDatabaseKinds())('the admin’s user flows on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<{ root: User; clerk: User; ada: User }> {
    latchkey = await createTestLatchkey({ kind });
    const root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const clerk = await addPerson(latchkey, 'clerk', { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, VIEW_USERS, ADMIN_CLIENT);
    return { root, clerk, ada: await addPerson(latchkey, 'ada') };
  }

  const reload = async (user: User) => (await latchkey.deps.store.users.findById(user.id))!;
  /** The change form as a superuser's browser sends it: every field, the permissions included. */
  const formOf = (user: User, permissions: AdminPermission[], changes: Partial<UserChangesByAdmin> = {}): UserChangesByAdmin => ({
    name: user.name,
    email: user.email,
    isActive: user.isActive,
    isStaff: user.isStaff,
    isSuperuser: user.isSuperuser,
    permissions,
    ...changes,
  });
  const ago = (minutes: number) => new Date(latchkey.clock.now().getTime() - minutes * 60 * 1000);
  const refusal = (work: Promise<unknown>) => work.then(() => 'done', (error: { code?: string }) => error.code);

  it('saves a name with the permissions sent as they were without a recent sign-in, and asks one of every change of power or address', async () => {
    const { root, clerk } = await setUp();
    const stale = ago(10);
    // A superuser's form always sends the permissions: unchanged, they grant nothing.
    await changeUserByAdmin(latchkey.deps, root, clerk, formOf(clerk, VIEW_USERS, { name: 'The Clerk' }), ADMIN_CLIENT, stale);
    expect((await reload(clerk)).name).toBe('The Clerk');
    // Never signed in in this session at all: the same.
    await changeUserByAdmin(latchkey.deps, root, await reload(clerk), formOf(await reload(clerk), [...VIEW_USERS].reverse(), { name: 'Clerk' }), ADMIN_CLIENT, undefined);
    expect((await reload(clerk)).name).toBe('Clerk');

    const current = await reload(clerk);
    const sensitive: Partial<UserChangesByAdmin>[] = [
      { permissions: [...VIEW_USERS, { model: 'users.user', action: 'delete' }] },
      { permissions: [] },
      { isSuperuser: true },
      { isStaff: false },
      { email: 'clerk.new@example.com' },
    ];
    for (const changes of sensitive) {
      for (const when of [stale, undefined]) {
        expect(await refusal(changeUserByAdmin(latchkey.deps, root, current, formOf(current, VIEW_USERS, { name: 'Not saved', ...changes }), ADMIN_CLIENT, when)), JSON.stringify(changes)).toBe(
          'reauthentication_required',
        );
      }
    }
    // Nothing of any of them was saved, the name that came along included.
    expect(await reload(clerk)).toEqual(current);
    expect(await latchkey.deps.store.adminPermissions.listForUser(clerk.id)).toEqual(VIEW_USERS);
    expect(await latchkey.deps.store.emailAddresses.listForUser(clerk.id)).toHaveLength(1);

    // Signed in four minutes ago: recent enough.
    await changeUserByAdmin(latchkey.deps, root, current, formOf(current, [{ model: 'users.user', action: 'change' }], { isSuperuser: true }), ADMIN_CLIENT, ago(4));
    expect(await reload(clerk)).toMatchObject({ isSuperuser: true });
    expect(await latchkey.deps.store.adminPermissions.listForUser(clerk.id)).toEqual([{ model: 'users.user', action: 'change' }]);
  });

  it('asks a recent sign-in before setting a password or deleting a user, and changes nothing without one', async () => {
    const { root, ada } = await setUp();
    const newPassword = { usable: true, password1: 'another long passphrase', password2: 'another long passphrase' };
    expect(await refusal(setPasswordByAdmin(latchkey.deps, root, ada, newPassword, ADMIN_CLIENT, ago(6)))).toBe('reauthentication_required');
    expect(await refusal(setPasswordByAdmin(latchkey.deps, root, ada, { ...newPassword, usable: false }, ADMIN_CLIENT, undefined))).toBe('reauthentication_required');
    expect(await latchkey.deps.passwords.verify(ADMIN_PASSWORD, (await reload(ada)).password)).toMatchObject({ valid: true });
    expect(await refusal(deleteUserByAdmin(latchkey.deps, root, ada, ADMIN_CLIENT, ago(6)))).toBe('reauthentication_required');
    expect(await latchkey.deps.store.users.findById(ada.id)).toBeDefined();

    await setPasswordByAdmin(latchkey.deps, root, ada, { ...newPassword, usable: false }, ADMIN_CLIENT, ago(1));
    expect(isUsablePassword((await reload(ada)).password)).toBe(false);
    await deleteUserByAdmin(latchkey.deps, root, ada, ADMIN_CLIENT, ago(1));
    expect(await latchkey.deps.store.users.findById(ada.id)).toBeUndefined();
  });

  it('refuses staff without the right as such, never asking them to sign in again first', async () => {
    const { clerk, ada } = await setUp();
    expect(await refusal(changeUserByAdmin(latchkey.deps, clerk, ada, formOf(ada, [], { permissions: undefined, isStaff: true }), ADMIN_CLIENT, ago(10)))).toBe('permission_denied');
    expect(await refusal(setPasswordByAdmin(latchkey.deps, clerk, ada, { usable: false, password1: '', password2: '' }, ADMIN_CLIENT, undefined))).toBe('permission_denied');
    expect(await refusal(deleteUserByAdmin(latchkey.deps, clerk, ada, ADMIN_CLIENT, undefined))).toBe('permission_denied');
  });

  it('saves the user, their deactivation and their permissions together or not at all', async () => {
    const { root, clerk } = await setUp();
    const session = await latchkey.deps.sessions.create({ userId: clerk.id });
    const { store } = latchkey.deps;
    // The permissions are written last; their failure must take the rest back.
    const failing: Store = {
      ...store,
      transaction: (work) =>
        store.transaction((repositories) =>
          work({ ...repositories, adminPermissions: { ...repositories.adminPermissions, replaceForUser: () => Promise.reject(new Error('connection lost')) } }),
        ),
    };
    const changes = formOf(clerk, [{ model: 'users.user', action: 'change' }], { name: 'Gone', isActive: false });
    await expect(changeUserByAdmin({ ...latchkey.deps, store: failing }, root, clerk, changes, ADMIN_CLIENT, ago(1))).rejects.toThrow('connection lost');
    expect(await reload(clerk)).toMatchObject({ name: '', isActive: true });
    expect(await latchkey.deps.sessions.load(session.id)).toBeDefined();
    expect(await store.adminPermissions.listForUser(clerk.id)).toEqual(VIEW_USERS);
    expect((await store.auditLog.search({ userId: clerk.id, event: 'admin_user_changed', limit: 10 })).length).toBe(0);

    await changeUserByAdmin(latchkey.deps, root, clerk, changes, ADMIN_CLIENT, ago(1));
    expect(await reload(clerk)).toMatchObject({ name: 'Gone', isActive: false });
    expect(await latchkey.deps.sessions.load(session.id)).toBeUndefined();
    expect(await store.adminPermissions.listForUser(clerk.id)).toEqual([{ model: 'users.user', action: 'change' }]);
  });
});
