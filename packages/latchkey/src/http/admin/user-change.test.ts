/**
 * A user's pages in the admin, on each database: add, change (and who may grant what), the
 * password page, "sign out everywhere", deactivation and deletion, each refused where the rules
 * say, with nothing changed then.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import { issueApiToken } from '../../tokens/api-tokens.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const USERS = '/admin/users/user/';

describe.each(testDatabaseKinds())('a user’s admin pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind));
    root = await person('root', { isStaff: true, isSuperuser: true });
  }

  async function signIn(username: string, client = browser): Promise<void> {
    expect((await signInToAdmin(client, username)).headers.location).toBe('/admin/');
  }

  const reload = async (user: User) => (await latchkey.deps.store.users.findById(user.id))!;
  const events = async (user: User) => (await latchkey.deps.store.auditLog.listForUser(user.id, 50)).map((record) => ({ event: record.event, data: record.data }));
  /** The change form as a browser sends it: the address shown in it unless the test types another. */
  const change = (user: User, fields: Record<string, string>, client = browser) => client.post(`${USERS}${user.id}/change/`, { email: user.email, ...fields });

  it('adds a user with a password typed twice, then shows its change page', async () => {
    await setUp();
    await signIn('root');
    const mismatch = await browser.post(`${USERS}add/`, { username: 'ada', email: 'ada@example.com', password1: ADMIN_PASSWORD, password2: 'something else entirely' });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.body).toContain('The two password fields didn’t match.');
    expect(mismatch.body).not.toContain(ADMIN_PASSWORD);
    const added = await browser.post(`${USERS}add/`, { username: 'ada', email: 'ada@example.com', password1: ADMIN_PASSWORD, password2: ADMIN_PASSWORD });
    const ada = (await latchkey.deps.store.users.findByUsername('ada'))!;
    expect(added.headers.location).toBe(`${USERS}${ada.id}/change/`);
    expect(isUsablePassword(ada.password)).toBe(true);
    expect((await browser.get(`${USERS}${ada.id}/change/`)).body).toContain('was added');
  });

  it('lets a superuser change a name, grant staff status and permissions, after a recent sign-in', async () => {
    await setUp();
    const clerk = await person('clerk');
    await signIn('root');
    const saved = await change(clerk, { name: 'The Clerk', is_active: 'on', is_staff: 'on', permissions_sent: '1', permissions: 'users.user:view' });
    expect(saved.headers.location).toBe(USERS);
    expect(await reload(clerk)).toMatchObject({ name: 'The Clerk', isStaff: true, isSuperuser: false });
    expect(await latchkey.deps.store.adminPermissions.listForUser(clerk.id)).toEqual([{ model: 'users.user', action: 'view' }]);
    expect((await events(root)).map((record) => record.event)).toEqual(expect.arrayContaining(['admin_user_changed', 'admin_permissions_changed']));

    // Ten minutes on, granting power asks who they are first; a name alone does not.
    latchkey.clock.advance(10 * 60 * 1000);
    const stale = await change(clerk, { name: 'The Clerk', is_active: 'on', is_staff: 'on', is_superuser: 'on', permissions_sent: '1', permissions: 'users.user:view' });
    expect(stale.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(`${USERS}${clerk.id}/change/`)}`);
    expect((await reload(clerk)).isSuperuser).toBe(false);
    const regranted = await change(clerk, { name: 'The Clerk', is_active: 'on', is_staff: 'on', permissions_sent: '1', permissions: 'users.user:change' });
    expect(regranted.headers.location).toMatch(/^\/accounts\/reauthenticate\//);
    expect(await latchkey.deps.store.adminPermissions.listForUser(clerk.id)).toEqual([{ model: 'users.user', action: 'view' }]);
    // The superuser's form sends the permissions every time: saved as they were, with a new name, they grant nothing.
    const renamed = await change(clerk, { name: 'Chief Clerk', is_active: 'on', is_staff: 'on', permissions_sent: '1', permissions: 'users.user:view' });
    expect(renamed.headers.location).toBe(USERS);
    expect((await reload(clerk)).name).toBe('Chief Clerk');
  });

  it('never lets staff who are not superusers grant power, themselves included, nor touch a superuser', async () => {
    await setUp();
    const clerk = await person('clerk', { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, [{ model: 'users.user', action: 'change' }], ADMIN_CLIENT);
    const ada = await person('ada');
    await signIn('clerk');
    const page = await browser.get(`${USERS}${clerk.id}/change/`);
    expect(page.body).toContain('id="id_is_superuser" name="is_superuser" type="checkbox" disabled');
    expect(page.body).not.toContain('name="permissions"');

    expect((await change(clerk, { name: '', is_active: 'on', is_staff: 'on', is_superuser: 'on' })).statusCode).toBe(403);
    expect((await change(ada, { name: '', is_active: 'on', is_staff: 'on' })).statusCode).toBe(403);
    expect((await change(clerk, { name: '', is_active: 'on', is_staff: 'on', permissions_sent: '1', permissions: 'users.user:delete' })).statusCode).toBe(403);
    expect((await change(root, { name: 'Pwned', is_active: 'on', is_staff: 'on', is_superuser: 'on' })).statusCode).toBe(403);
    expect(await reload(clerk)).toMatchObject({ isSuperuser: false });
    expect(await reload(ada)).toMatchObject({ isStaff: false });
    expect((await reload(root)).name).toBe('');
    expect(await latchkey.deps.store.adminPermissions.listForUser(clerk.id)).toEqual([{ model: 'users.user', action: 'change' }]);

    // What they may do: a name, on someone who is not a superuser.
    expect((await change(ada, { name: 'Ada Lovelace', is_active: 'on' })).headers.location).toBe(USERS);
    expect((await reload(ada)).name).toBe('Ada Lovelace');
  });

  it('shows a view-only staff member no form, and refuses their changes', async () => {
    await setUp();
    const viewer = await person('viewer', { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, viewer, [{ model: 'users.user', action: 'view' }], ADMIN_CLIENT);
    const ada = await person('ada');
    await signIn('viewer');
    const page = await browser.get(`${USERS}${ada.id}/change/`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('>Save</button>');
    expect(page.body).not.toContain('>Delete</a>');
    expect((await browser.get(USERS)).body).not.toContain('Add user');
    expect((await change(ada, { name: 'Changed', is_active: 'on' })).statusCode).toBe(403);
    expect((await browser.post(`${USERS}${ada.id}/delete/`, {})).statusCode).toBe(403);
    expect((await browser.post(`${USERS}${ada.id}/password/`, { usable: '' })).statusCode).toBe(403);
    expect((await reload(ada)).name).toBe('');
    expect(await latchkey.deps.store.users.findById(ada.id)).toBeDefined();
    expect((await browser.get(`${USERS}99999/change/`)).statusCode).toBe(404);
  });

  it('sets a password or none, ending the user’s sessions, and signs a user out everywhere', async () => {
    await setUp();
    const ada = await person('ada');
    const adaBrowser = browser.another();
    expect((await adaBrowser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).statusCode).toBe(302);
    await signIn('root');
    const reset = await browser.post(`${USERS}${ada.id}/password/`, { usable: 'on', password1: 'another long passphrase', password2: 'another long passphrase' });
    expect(reset.headers.location).toBe(`${USERS}${ada.id}/change/`);
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
    expect((await adaBrowser.post('/accounts/login/', { login: 'ada', password: 'another long passphrase' })).statusCode).toBe(302);

    expect((await browser.post(`${USERS}${ada.id}/sessions/end/`, {})).headers.location).toBe(`${USERS}${ada.id}/change/`);
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);

    await browser.post(`${USERS}${ada.id}/password/`, { usable: '' });
    expect(isUsablePassword((await reload(ada)).password)).toBe(false);
  });

  it('signs a user out everywhere with the sessions’ delete permission, on the user’s page as on the sessions list', async () => {
    await setUp();
    const ada = await person('ada');
    const adaBrowser = browser.another();
    expect((await adaBrowser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).statusCode).toBe(302);
    // May change users, not end sessions: no button, and the POST is refused.
    const clerk = await person('clerk', { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, [{ model: 'users.user', action: 'change' }], ADMIN_CLIENT);
    await signIn('clerk');
    expect((await browser.get(`${USERS}${ada.id}/change/`)).body).not.toContain('Sign out everywhere');
    expect((await browser.post(`${USERS}${ada.id}/sessions/end/`, {})).statusCode).toBe(403);
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toHaveLength(1);

    // May view users and end sessions: the button, and the sessions end.
    const ender = await person('ender', { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, ender, [{ model: 'users.user', action: 'view' }, { model: 'sessions.session', action: 'delete' }], ADMIN_CLIENT);
    const enderBrowser = browser.another();
    await signIn('ender', enderBrowser);
    expect((await enderBrowser.get(`${USERS}${ada.id}/change/`)).body).toContain('Sign out everywhere');
    expect((await enderBrowser.post(`${USERS}${ada.id}/sessions/end/`, {})).headers.location).toBe(`${USERS}${ada.id}/change/`);
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
    expect((await adaBrowser.get('/accounts/email/')).headers.location).toMatch(/^\/accounts\/login\//);
    const [record] = await latchkey.deps.store.auditLog.search({ userId: ada.id, event: 'admin_user_changed', limit: 1 });
    expect(record).toMatchObject({ userId: ender.id, targetUserId: ada.id, data: { change: 'sessions_ended', count: 1 } });
    // Their own: signed out, on to the admin's login.
    expect((await enderBrowser.post(`${USERS}${ender.id}/sessions/end/`, {})).headers.location).toBe('/admin/login/');
    expect((await enderBrowser.get('/admin/')).headers.location).toBe('/admin/login/?next=%2Fadmin%2F');
  });

  it('deactivates a user, ending their sessions and API token at once', async () => {
    await setUp();
    const ada = await person('ada');
    await issueApiToken(latchkey.deps, ada);
    const adaBrowser = browser.another();
    await adaBrowser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD });
    await signIn('root');
    await change(ada, { name: '', is_active: '' });
    expect((await reload(ada)).isActive).toBe(false);
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
    expect(await latchkey.deps.store.apiTokens.findForUser(ada.id)).toBeUndefined();
    // Nobody takes their own access away.
    expect((await change(root, { name: '', is_active: '', is_staff: 'on', is_superuser: 'on' })).statusCode).toBe(403);
  });

  it('deletes a user after a confirmation that lists what goes with it, never the staff member themself', async () => {
    await setUp();
    const ada = await person('ada');
    await signIn('root');
    const confirm = await browser.get(`${USERS}${ada.id}/delete/`);
    expect(confirm.body).toContain('Email addresses: 1');
    expect((await browser.post(`${USERS}${ada.id}/delete/`, {}, { csrf: false })).statusCode).toBe(403);
    expect(await latchkey.deps.store.users.findById(ada.id)).toBeDefined();
    expect((await browser.post(`${USERS}${ada.id}/delete/`, {})).headers.location).toBe(USERS);
    expect(await latchkey.deps.store.users.findById(ada.id)).toBeUndefined();
    expect((await browser.post(`${USERS}${root.id}/delete/`, {})).statusCode).toBe(403);
    expect(await latchkey.deps.store.users.findById(root.id)).toBeDefined();
  });

  it('changes a user’s address to a new verified primary one after a recent sign-in, voiding other accounts’ unverified claims', async () => {
    await setUp();
    const ada = await person('ada');
    const squatter = await createUser(latchkey.deps, { username: 'squatter', email: 'ada.new@example.com', password: ADMIN_PASSWORD, emailVerified: false });
    await signIn('root');
    expect((await change(ada, { name: '', is_active: 'on', email: 'not an address' })).statusCode).toBe(400);
    expect((await change(ada, { name: '', is_active: 'on', email: 'Ada.New@Example.com' })).headers.location).toBe(USERS);
    expect((await reload(ada)).email).toBe('ada.new@example.com');
    expect(await latchkey.deps.store.emailAddresses.listForUser(ada.id)).toMatchObject([
      { email: 'ada.new@example.com', verified: true, primary: true },
      { email: 'ada@example.com', verified: true, primary: false },
    ]);
    // The stranger who claimed it first, unverified, loses the claim and the password on it.
    expect(await latchkey.deps.store.emailAddresses.listForUser(squatter.id)).toEqual([]);
    expect(isUsablePassword((await reload(squatter)).password)).toBe(false);

    // An address another account verified is refused, and a stale sign-in is asked first.
    await person('grace');
    expect((await change(ada, { name: '', is_active: 'on', email: 'grace@example.com' })).body).toContain('Another account has verified this address.');
    latchkey.clock.advance(10 * 60 * 1000);
    expect((await change(await reload(ada), { name: '', is_active: 'on', email: 'ada.third@example.com' })).headers.location).toMatch(/^\/accounts\/reauthenticate\//);
    expect((await reload(ada)).email).toBe('ada.new@example.com');
  });
});
