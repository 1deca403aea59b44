/**
 * Staff against staff, on each database: a staff member who may change users tries to take over
 * a staff member who holds more (set the password or the address, then sign in as them), or to
 * reach them through any other page; and a superuser tries to lock themself out. Each is refused
 * with a page that says why, nothing changes, and no audit record is written for it. (Who may
 * change whom: docs/admin.md.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { AdminPermission } from '../../admin/model.js';
import type { User } from '../../account/model.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import { ADMIN_CLIENT, addPerson, openAdmin, postSelected, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import type { PageClient } from '../../testing/pages.js';
import { issueApiToken } from '../../tokens/api-tokens.js';

const ADMIN = '/admin/';
const USERS = `${ADMIN}users/user/`;
const STOLEN_PASSWORD = 'the attacker knows this one';
const HOLDS_MORE = 'This account holds admin permissions you do not hold';
const OWN_ACCESS = 'You cannot take away your own access to the admin';

describe.each(testDatabaseKinds())('staff acting on staff in the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind, { plugin: { api: {} } }));
    root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
  }

  /** A staff member holding these permissions. */
  async function staff(username: string, permissions: AdminPermission[]): Promise<User> {
    const member = await addPerson(latchkey, username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, member, permissions, ADMIN_CLIENT);
    return member;
  }

  async function signIn(username: string, client = browser): Promise<void> {
    expect((await signInToAdmin(client, username)).headers.location).toBe(ADMIN);
  }

  const reload = async (user: User) => (await latchkey.deps.store.users.findById(user.id))!;
  /** The id of the newest audit record: none newer means nothing was recorded. */
  const lastAuditId = async () => (await latchkey.deps.store.auditLog.search({ limit: 1 }))[0]?.id;
  const changeForm = (user: User, fields: Record<string, string>) => browser.post(`${USERS}${user.id}/change/`, { name: user.name, email: user.email, is_active: 'on', is_staff: 'on', ...fields });

  it('never lets staff who may change users set the password, address, flags or permissions of staff who hold more, so they cannot sign in as them', async () => {
    await setUp();
    const bea = await staff('bea', [{ model: 'users.user', action: 'change' }, { model: 'socialaccount.socialapp', action: 'change' }]);
    await staff('clerk', [{ model: 'users.user', action: 'change' }]);
    const ada = await addPerson(latchkey, 'ada');
    await signIn('clerk');
    const before = { bea: await reload(bea), addresses: await latchkey.deps.store.emailAddresses.listForUser(bea.id), audit: await lastAuditId() };

    const refusals = [
      await browser.post(`${USERS}${bea.id}/password/`, { usable: 'on', password1: STOLEN_PASSWORD, password2: STOLEN_PASSWORD }),
      await browser.post(`${USERS}${bea.id}/password/`, { usable: '' }),
      await changeForm(bea, { email: 'clerk.elsewhere@example.com' }),
      await changeForm(bea, { is_active: '' }),
      await changeForm(bea, { name: 'Bea, renamed' }),
      await changeForm(bea, { permissions_sent: '1', permissions: 'users.user:change' }),
    ];
    for (const refused of refusals) {
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain(HOLDS_MORE);
    }
    // The pages say so before anything is typed: the change page shows no form, the password page is refused.
    const page = await browser.get(`${USERS}${bea.id}/change/`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(HOLDS_MORE);
    expect(page.body).not.toContain('>Save</button>');
    expect((await browser.get(`${USERS}${bea.id}/password/`)).statusCode).toBe(403);
    // In a bulk action, Bea is skipped and said so; Ada, whom the clerk may change, is deactivated.
    expect((await postSelected(browser, latchkey, USERS, { action: 'deactivate', post: 'yes' }, [bea.id, ada.id])).headers.location).toBe(USERS);
    expect((await browser.get(USERS)).body).toContain(`Skipped 1 user: “bea” (${HOLDS_MORE}`);
    expect((await reload(ada)).isActive).toBe(false);

    expect(await reload(bea)).toEqual(before.bea);
    expect(await latchkey.deps.store.emailAddresses.listForUser(bea.id)).toEqual(before.addresses);
    const recorded = await latchkey.deps.store.auditLog.search({ limit: 10 });
    expect(recorded.filter((record) => record.id > (before.audit ?? 0)).map((record) => record.data.target)).toEqual([ada.id]);
    // The takeover it was for: Bea's password still works, and the clerk's does not open her account.
    expect((await signInToAdmin(browser.another(), 'bea')).headers.location).toBe(ADMIN);
    const asBea = await browser.another().post(`${ADMIN}login/`, { username: 'bea', password: STOLEN_PASSWORD, next: ADMIN });
    expect(asBea.statusCode).toBe(400);
  });

  it('refuses staff with every other right anything of staff who hold more: token, sessions, authenticator, social account, address, deletion', async () => {
    await setUp();
    const bea = await staff('bea', [{ model: 'socialaccount.socialapp', action: 'change' }]);
    const rights: [AdminPermission['model'], AdminPermission['action'][]][] = [
      ['users.user', ['change', 'delete']],
      ['account.emailaddress', ['change']],
      ['authtoken.tokenproxy', ['add', 'delete']],
      ['sessions.session', ['delete']],
      ['mfa.authenticator', ['delete']],
      ['socialaccount.socialaccount', ['delete']],
    ];
    await staff('helpdesk', rights.flatMap(([model, actions]) => actions.map((action) => ({ model, action }))));
    const address = await latchkey.deps.store.emailAddresses.add({ userId: bea.id, email: 'bea.elsewhere@example.com', verified: false, primary: false });
    await activateTotpFor(latchkey, bea);
    const [authenticator] = await latchkey.deps.store.authenticators.listForUser(bea.id);
    const session = await latchkey.deps.sessions.create({ userId: bea.id });
    const now = latchkey.clock.now();
    const account = await latchkey.deps.store.socialAccounts.create({ userId: bea.id, provider: 'corp', uid: 'bea-at-corp', extraData: {}, dateJoined: now, lastLogin: now });
    await signIn('helpdesk');

    // A key of Bea's would sign in to the API as her.
    const tokenAdded = await browser.post(`${ADMIN}authtoken/tokenproxy/add/`, { user: 'bea' });
    expect(tokenAdded.statusCode).toBe(403);
    expect(tokenAdded.body).toContain(HOLDS_MORE);
    expect(await latchkey.deps.store.apiTokens.findForUser(bea.id)).toBeUndefined();
    await issueApiToken(latchkey.deps, bea);
    const before = JSON.stringify(await snapshot(bea));
    const audit = await lastAuditId();

    for (const path of [
      `${ADMIN}authtoken/tokenproxy/${bea.id}/delete/`,
      `${ADMIN}sessions/session/${session.idHash}/delete/`,
      `${ADMIN}sessions/session/user/${bea.id}/delete/`,
      `${USERS}${bea.id}/sessions/end/`,
      `${ADMIN}mfa/authenticator/${authenticator!.id}/delete/`,
      `${ADMIN}socialaccount/socialaccount/${account.id}/delete/`,
      `${USERS}${bea.id}/delete/`,
    ]) {
      const refused = await browser.post(path, {});
      expect(refused.statusCode, path).toBe(403);
      expect(refused.body, path).toContain(HOLDS_MORE);
    }
    await postSelected(browser, latchkey, `${ADMIN}account/emailaddress/`, { action: 'mark_verified', post: 'yes' }, [address.id]);
    expect((await browser.get(`${ADMIN}account/emailaddress/`)).body).toContain('Not marked verified, because you may not change their user: bea.elsewhere@example.com.');
    await postSelected(browser, latchkey, USERS, { action: 'delete_selected', post: 'yes' }, [bea.id]);
    expect((await browser.get(USERS)).body).toContain(`Skipped 1 user: “bea” (${HOLDS_MORE}`);

    expect(JSON.stringify(await snapshot(bea))).toBe(before);
    expect(await lastAuditId()).toBe(audit);
  });

  it('lets staff who may change users change those who hold no more than they do', async () => {
    await setUp();
    await staff('clerk', [{ model: 'users.user', action: 'change' }]);
    const viewer = await staff('viewer', [{ model: 'users.user', action: 'view' }]);
    const ada = await addPerson(latchkey, 'ada');
    await signIn('clerk');
    for (const user of [ada, viewer]) {
      const changed = await browser.post(`${USERS}${user.id}/password/`, { usable: 'on', password1: STOLEN_PASSWORD, password2: STOLEN_PASSWORD });
      expect(changed.headers.location).toBe(`${USERS}${user.id}/change/`);
      expect(await latchkey.deps.passwords.verify(STOLEN_PASSWORD, (await reload(user)).password)).toMatchObject({ valid: true });
    }
    expect((await changeForm(viewer, { name: 'The Viewer' })).headers.location).toBe(USERS);
    expect((await reload(viewer)).name).toBe('The Viewer');
  });

  it('lets nobody but a superuser grant a permission: staff grant none they lack, to others or themself', async () => {
    await setUp();
    const clerk = await staff('clerk', [{ model: 'users.user', action: 'change' }]);
    const viewer = await staff('viewer', [{ model: 'users.user', action: 'view' }]);
    await signIn('clerk');
    for (const user of [viewer, clerk]) {
      const refused = await changeForm(user, { permissions_sent: '1', permissions: 'socialaccount.socialapp:change' });
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain('Only a superuser may change staff or superuser status, or admin permissions.');
    }
    expect(await latchkey.deps.store.adminPermissions.listForUser(viewer.id)).toEqual([{ model: 'users.user', action: 'view' }]);
    expect(await latchkey.deps.store.adminPermissions.listForUser(clerk.id)).toEqual([{ model: 'users.user', action: 'change' }]);
  });

  it('never lets a superuser lock themself out: no unusable password, no dropped flag, no deactivation or deletion of their own', async () => {
    await setUp();
    await signIn('root');
    const before = { root: await reload(root), audit: await lastAuditId() };
    const unusable = await browser.post(`${USERS}${root.id}/password/`, { usable: '' });
    expect(unusable.statusCode).toBe(403);
    expect(unusable.body).toContain('You cannot make your own password unusable');
    const dropped: Record<string, string>[] = [{ is_superuser: '' }, { is_superuser: 'on', is_staff: '' }, { is_superuser: 'on', is_active: '' }];
    for (const fields of dropped) {
      const refused = await changeForm(root, fields);
      expect(refused.statusCode, JSON.stringify(fields)).toBe(403);
      expect(refused.body).toContain(OWN_ACCESS);
    }
    const deleted = await browser.post(`${USERS}${root.id}/delete/`, {});
    expect(deleted.statusCode).toBe(403);
    expect(deleted.body).toContain('You cannot delete your own account here.');
    for (const action of ['deactivate', 'delete_selected']) {
      await postSelected(browser, latchkey, USERS, { action, post: 'yes' }, [root.id]);
      expect((await browser.get(USERS)).body).toContain('Skipped 1 user: “root”');
    }
    expect(await reload(root)).toEqual(before.root);
    expect(isUsablePassword((await reload(root)).password)).toBe(true);
    expect(await lastAuditId()).toBe(before.audit);
    // Still signed in, and still able to sign in.
    expect((await browser.get(USERS)).statusCode).toBe(200);
    expect((await signInToAdmin(browser.another(), 'root')).headers.location).toBe(ADMIN);
  });

  async function snapshot(user: User) {
    const store = latchkey.deps.store;
    return {
      user: await store.users.findById(user.id),
      permissions: await store.adminPermissions.listForUser(user.id),
      addresses: await store.emailAddresses.listForUser(user.id),
      sessions: (await store.sessions.listForUser(user.id)).map((session) => session.idHash),
      token: (await store.apiTokens.findForUser(user.id))?.keyHash,
      authenticators: (await store.authenticators.listForUser(user.id)).map((authenticator) => authenticator.id),
      socialAccounts: await store.socialAccounts.listForUser(user.id),
    };
  }
});
