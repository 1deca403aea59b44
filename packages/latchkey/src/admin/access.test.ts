/**
 * Who gets into the admin and what they may do there, on every database: Django's rules (active
 * staff only; superusers everything; other staff what a superuser granted, `change` implying
 * `view`), and the one way permissions change, by a superuser, audited.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../account/users.js';
import { isLatchkeyError } from '../core/errors.js';
import type { User } from '../account/model.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { adminGrantsOf, mayEnterAdmin, parseAdminPermissions, setAdminPermissions } from './access.js';
import { ADMIN_MODELS, type AdminAction, type AdminModel, type AdminPermission } from './model.js';

const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe('mayEnterAdmin', () => {
  it('lets in active staff only', () => {
    expect(mayEnterAdmin({ isActive: true, isStaff: true })).toBe(true);
    expect(mayEnterAdmin({ isActive: false, isStaff: true })).toBe(false);
    expect(mayEnterAdmin({ isActive: true, isStaff: false })).toBe(false);
    expect(mayEnterAdmin(undefined)).toBe(false);
  });
});

describe('parseAdminPermissions', () => {
  it('reads "model:action" values, each once, in the order of the models and actions', () => {
    expect(parseAdminPermissions(['sessions.session:delete', 'users.user:change', 'users.user:view', 'users.user:change'])).toEqual([
      { model: 'users.user', action: 'view' },
      { model: 'users.user', action: 'change' },
      { model: 'sessions.session', action: 'delete' },
    ]);
    expect(parseAdminPermissions([])).toEqual([]);
  });

  it.each(['users.user', 'users.user:', 'users.user:export', 'auth.group:view', 'users.user:view:x', 'USERS.USER:VIEW', ' users.user:view', ''])(
    "refuses %j with 'invalid_input' on the permissions field",
    (value) => {
      let refusal: unknown;
      try {
        parseAdminPermissions(['users.user:view', value]);
      } catch (error) {
        refusal = error;
      }
      expect(isLatchkeyError(refusal, 'invalid_input')).toBe(true);
      expect((refusal as { param?: string }).param).toBe('permissions');
    },
  );
});

describe.each(testDatabaseKinds())('admin grants on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<{ root: User; staff: User }> {
    latchkey = await createTestLatchkey({ kind });
    const root = await createUser(latchkey.deps, { username: 'root', password: null, isStaff: true, isSuperuser: true, emailVerified: false });
    const staff = await createUser(latchkey.deps, { username: 'staff', password: null, isStaff: true, emailVerified: false });
    return { root, staff };
  }

  async function grantsOf(user: User) {
    return adminGrantsOf(latchkey.deps, user);
  }

  function everything(grants: { may(model: AdminModel, action: AdminAction): boolean }): boolean {
    return ADMIN_MODELS.every((model) => (['view', 'add', 'change', 'delete'] as const).every((action) => grants.may(model, action)));
  }

  const permissionEvents = async (user: User) =>
    (await latchkey.deps.store.auditLog.listForUser(user.id, 100)).filter((record) => record.event === 'admin_permissions_changed');

  it('gives an active superuser everything, without a permission stored', async () => {
    const { root } = await setUp();
    const grants = await grantsOf(root);
    expect(grants.superuser).toBe(true);
    expect(everything(grants)).toBe(true);
    expect(grants.models()).toEqual([...ADMIN_MODELS]);
    // A name this version does not know opens nothing, even for a superuser.
    expect(grants.may('auth.group' as AdminModel, 'view')).toBe(false);
    expect(grants.may('users.user', 'export' as AdminAction)).toBe(false);
  });

  it('gives nothing to an inactive superuser or staff member, a superuser who is not staff, or a user who is not staff, whatever was granted', async () => {
    const { root, staff } = await setUp();
    const plain = await createUser(latchkey.deps, { username: 'plain', password: null, emailVerified: false });
    const grant: AdminPermission[] = [{ model: 'users.user', action: 'change' }];
    await setAdminPermissions(latchkey.deps, root, staff, grant, client);
    await setAdminPermissions(latchkey.deps, root, plain, grant, client);

    const inactiveStaff = (await latchkey.deps.store.users.update(staff.id, { isActive: false }))!;
    const inactiveRoot = (await latchkey.deps.store.users.update(root.id, { isActive: false }))!;
    const rootNotStaff = { ...root, isStaff: false };
    for (const user of [inactiveStaff, inactiveRoot, rootNotStaff, plain]) {
      const grants = await grantsOf(user);
      expect(grants.superuser).toBe(false);
      expect(grants.models()).toEqual([]);
      expect(grants.may('users.user', 'view')).toBe(false);
    }
  });

  it('gives staff without grants nothing: they may enter, and see no model', async () => {
    const { staff } = await setUp();
    expect(mayEnterAdmin(staff)).toBe(true);
    const grants = await grantsOf(staff);
    expect(grants.superuser).toBe(false);
    expect(grants.models()).toEqual([]);
    expect(grants.may('users.user', 'view')).toBe(false);
  });

  it('gives staff what a superuser granted, with view implied by change (and by nothing else)', async () => {
    const { root, staff } = await setUp();
    const granted = parseAdminPermissions(['users.user:change', 'sessions.session:delete', 'account.emailaddress:view', 'mfa.authenticator:add']);
    await setAdminPermissions(latchkey.deps, root, staff, granted, client);
    const grants = await grantsOf(staff);
    expect(grants.superuser).toBe(false);
    expect(grants.may('users.user', 'change')).toBe(true);
    expect(grants.may('users.user', 'view')).toBe(true);
    expect(grants.may('users.user', 'add')).toBe(false);
    expect(grants.may('users.user', 'delete')).toBe(false);
    expect(grants.may('sessions.session', 'delete')).toBe(true);
    expect(grants.may('sessions.session', 'view')).toBe(false);
    expect(grants.may('account.emailaddress', 'view')).toBe(true);
    expect(grants.may('account.emailaddress', 'change')).toBe(false);
    expect(grants.may('mfa.authenticator', 'view')).toBe(false);
    expect(grants.may('socialaccount.socialapp', 'view')).toBe(false);
    expect(grants.models()).toEqual(['users.user', 'account.emailaddress']);
  });

  it('replaces the set, records who changed whose permissions to what, and records nothing when the set is unchanged', async () => {
    const { root, staff } = await setUp();
    await setAdminPermissions(latchkey.deps, root, staff, parseAdminPermissions(['users.user:view', 'users.user:change']), client);
    await setAdminPermissions(latchkey.deps, root, staff, parseAdminPermissions(['audit.auditrecord:view']), client);
    expect(await latchkey.deps.store.adminPermissions.listForUser(staff.id)).toEqual([{ model: 'audit.auditrecord', action: 'view' }]);
    expect((await grantsOf(staff)).models()).toEqual(['audit.auditrecord']);

    const records = await permissionEvents(root);
    expect(records).toHaveLength(2);
    expect(records.map((record) => record.data)).toEqual(
      expect.arrayContaining([
        { target: staff.id, permissions: ['users.user:view', 'users.user:change'] },
        { target: staff.id, permissions: ['audit.auditrecord:view'] },
      ]),
    );
    expect(records[0]).toMatchObject({ userId: root.id, ipAddress: client.ip, userAgent: client.userAgent });

    // The same set again, in another order and with a duplicate: no change, no entry.
    await setAdminPermissions(latchkey.deps, root, staff, [{ model: 'audit.auditrecord', action: 'view' }, { model: 'audit.auditrecord', action: 'view' }], client);
    expect(await permissionEvents(root)).toHaveLength(2);

    await setAdminPermissions(latchkey.deps, root, staff, [], client);
    expect((await grantsOf(staff)).models()).toEqual([]);
    expect((await permissionEvents(root))[0]?.data).toEqual({ target: staff.id, permissions: [] });
  });

  it("refuses a staff member who is not a superuser (even granting themself), with 'permission_denied', changing nothing", async () => {
    const { root, staff } = await setUp();
    await setAdminPermissions(latchkey.deps, root, staff, parseAdminPermissions(['users.user:change']), client);
    const other = await createUser(latchkey.deps, { username: 'other', password: null, isStaff: true, emailVerified: false });
    const inactiveRoot = { ...root, isActive: false };
    const rootNotStaff = { ...root, isStaff: false };
    for (const [actor, target] of [
      [staff, staff],
      [staff, other],
      [inactiveRoot, other],
      [rootNotStaff, other],
    ] as const) {
      const refusal = await setAdminPermissions(latchkey.deps, actor, target, parseAdminPermissions(['users.user:delete']), client).catch((error: unknown) => error);
      expect(isLatchkeyError(refusal, 'permission_denied')).toBe(true);
    }
    expect(await latchkey.deps.store.adminPermissions.listForUser(staff.id)).toEqual([{ model: 'users.user', action: 'change' }]);
    expect(await latchkey.deps.store.adminPermissions.listForUser(other.id)).toEqual([]);
    expect(await permissionEvents(staff)).toEqual([]);
    expect(await permissionEvents(root)).toHaveLength(1);
  });

  it("refuses an unknown model or action cast past the type, with 'invalid_input', changing nothing", async () => {
    const { root, staff } = await setUp();
    await setAdminPermissions(latchkey.deps, root, staff, parseAdminPermissions(['users.user:view']), client);
    for (const bad of [
      { model: 'auth.group', action: 'view' },
      { model: 'users.user', action: 'export' },
    ]) {
      const permissions = [{ model: 'sessions.session', action: 'view' }, bad] as AdminPermission[];
      const refusal = await setAdminPermissions(latchkey.deps, root, staff, permissions, client).catch((error: unknown) => error);
      expect(isLatchkeyError(refusal, 'invalid_input')).toBe(true);
      expect((refusal as { param?: string }).param).toBe('permissions');
    }
    expect(await latchkey.deps.store.adminPermissions.listForUser(staff.id)).toEqual([{ model: 'users.user', action: 'view' }]);
    expect(await permissionEvents(root)).toHaveLength(1);
  });

  it("reports a target deleted meanwhile with 'not_found', recording nothing", async () => {
    const { root, staff } = await setUp();
    await latchkey.deps.store.users.delete(staff.id);
    const refusal = await setAdminPermissions(latchkey.deps, root, staff, [], client).catch((error: unknown) => error);
    expect(isLatchkeyError(refusal, 'not_found')).toBe(true);
    expect(await permissionEvents(root)).toEqual([]);
  });
});
