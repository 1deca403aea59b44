/**
 * Who may change whom, on each database, through the admin's flows as any door calls them: staff
 * act on an account only when they hold every permission it holds (counting those it holds while
 * inactive or not staff), a superuser on anyone, and nobody locks themself out. (docs/admin.md,
 * "Who may change whom".)
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { setAdminPermissions } from '../access.js';
import type { AdminPermission } from '../model.js';
import { changeUserByAdmin, deactivateUserByAdmin, setPasswordByAdmin } from './manage-users.js';
import { endUserSessionsByAdmin } from './manage-sessions.js';

const NEW_PASSWORD = { usable: true, password1: 'another long passphrase', password2: 'another long passphrase' };
const SOCIAL_APPS: AdminPermission = { model: 'socialaccount.socialapp', action: 'change' };

describe.each(testDatabaseKinds())('who may change whom in the admin’s flows on %s', (kind) => {
  let latchkey: TestLatchkey;
  let root: User;
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({ kind });
    root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
  }

  async function holding(username: string, permissions: AdminPermission[], roles: { isStaff?: boolean; isActive?: boolean } = { isStaff: true }): Promise<User> {
    const user = await addPerson(latchkey, username, { isStaff: roles.isStaff ?? false });
    await setAdminPermissions(latchkey.deps, root, user, permissions, ADMIN_CLIENT);
    if (roles.isActive === false) await latchkey.deps.store.users.update(user.id, { isActive: false });
    return reload(user);
  }

  const reload = async (user: User) => (await latchkey.deps.store.users.findById(user.id))!;
  const now = () => latchkey.clock.now();
  const refusal = (work: Promise<unknown>) => work.then(() => 'done', (error: { code?: string }) => error.code);
  const passwordWorks = async (user: User) => (await latchkey.deps.passwords.verify(ADMIN_PASSWORD, (await reload(user)).password)).valid;

  it('counts what an account holds while inactive or not staff: one tick of a superuser would give it back', async () => {
    await setUp();
    const clerk = await holding('clerk', [{ model: 'users.user', action: 'change' }]);
    const resting = await holding('resting', [SOCIAL_APPS], { isStaff: true, isActive: false });
    const former = await holding('former', [SOCIAL_APPS], { isStaff: false });
    for (const target of [resting, former]) {
      expect(await refusal(setPasswordByAdmin(latchkey.deps, clerk, target, NEW_PASSWORD, ADMIN_CLIENT, now())), target.username!).toBe('permission_denied');
      expect(await passwordWorks(target)).toBe(true);
    }
    const reactivation = { name: resting.name, email: resting.email, isActive: true, isStaff: true, isSuperuser: false };
    expect(await refusal(changeUserByAdmin(latchkey.deps, clerk, resting, reactivation, ADMIN_CLIENT, now()))).toBe('permission_denied');
    expect((await reload(resting)).isActive).toBe(false);
    // A superuser holds every permission.
    await setPasswordByAdmin(latchkey.deps, root, former, NEW_PASSWORD, ADMIN_CLIENT, now());
    expect(await passwordWorks(former)).toBe(false);
  });

  it('counts view as held by whoever may change, and nothing else as implied', async () => {
    await setUp();
    const clerk = await holding('clerk', [{ model: 'users.user', action: 'change' }, { model: 'sessions.session', action: 'delete' }]);
    const viewer = await holding('viewer', [{ model: 'users.user', action: 'view' }, { model: 'sessions.session', action: 'delete' }]);
    const deleter = await holding('deleter', [{ model: 'users.user', action: 'delete' }]);
    await setPasswordByAdmin(latchkey.deps, clerk, viewer, NEW_PASSWORD, ADMIN_CLIENT, now());
    expect(await passwordWorks(viewer)).toBe(false);
    expect(await refusal(deactivateUserByAdmin(latchkey.deps, clerk, deleter, ADMIN_CLIENT))).toBe('permission_denied');
    expect(await refusal(endUserSessionsByAdmin(latchkey.deps, clerk, deleter, ADMIN_CLIENT))).toBe('permission_denied');
    expect((await reload(deleter)).isActive).toBe(true);
    // And the reverse: the viewer, who may end sessions, holds less than the clerk.
    expect(await refusal(endUserSessionsByAdmin(latchkey.deps, viewer, clerk, ADMIN_CLIENT))).toBe('permission_denied');
  });

  it('refuses anyone making their own password unusable, and nothing is recorded', async () => {
    await setUp();
    const clerk = await holding('clerk', [{ model: 'users.user', action: 'change' }]);
    for (const actor of [root, clerk]) {
      const unusable = { usable: false, password1: '', password2: '' };
      expect(await refusal(setPasswordByAdmin(latchkey.deps, actor, actor, unusable, ADMIN_CLIENT, now())), actor.username!).toBe('permission_denied');
      expect(isUsablePassword((await reload(actor)).password)).toBe(true);
      expect(await latchkey.deps.store.auditLog.search({ userId: actor.id, event: 'admin_user_changed', limit: 10 })).toEqual([]);
    }
    // A new usable password of their own is theirs to set.
    await setPasswordByAdmin(latchkey.deps, clerk, clerk, NEW_PASSWORD, ADMIN_CLIENT, now());
    expect(await passwordWorks(clerk)).toBe(false);
  });
});
