/**
 * The admin area as a browser meets it, on each database: who gets in (active staff only, each
 * page by its permission), the admin's own login (through the login pipeline, MFA included) and
 * the forced account login, and the users list (search, filters, paging, escaping).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import { STAFF_ONLY } from '../../admin/flows/admin-login.js';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import type { SettingValues } from '../../config/settings.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';


describe.each(testDatabaseKinds())('the admin area on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind, { settings }));
  }

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  async function adminLogin(username: string, client = browser) {
    return signInToAdmin(client, username);
  }

  const sessionUser = async (client = browser) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;

  it('sends a visitor to the admin login, and a superuser through it to the index', async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true });
    expect((await browser.get('/admin/')).headers.location).toBe('/admin/login/?next=%2Fadmin%2F');
    const form = await browser.get('/admin/login/?next=%2Fadmin%2Fusers%2Fuser%2F');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('value="/admin/users/user/"');
    expect(form.headers['cache-control']).toBe('no-store');

    const signedIn = await adminLogin('root');
    expect(signedIn.headers.location).toBe('/admin/');
    const index = await browser.get('/admin/');
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('href="/admin/users/user/"');
    const records = await latchkey.deps.store.auditLog.listForUser((await sessionUser())!, 10);
    expect(records.find((record) => record.event === 'user_logged_in')?.data).toEqual({ method: 'admin_password' });
  });

  it("adds a user, and shows every bad field's error at once under its own field, the password's under password1", async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true });
    await adminLogin('root');
    const refused = await browser.post('/admin/users/user/add/', { username: 'no spaces', email: 'not-an-address', password1: 'Zq3!x', password2: 'different' });
    expect(refused.statusCode).toBe(400);
    expect([...refused.body.matchAll(/id="([a-z0-9]+)-errors"/g)].map((match) => match[1])).toEqual(['username', 'email', 'password1', 'password2']);
    expect(refused.body).toContain('This password is too short.');
    expect(refused.body).toContain('value="no spaces"');
    expect(await latchkey.users.findByUsername('no spaces')).toBeUndefined();
    const added = await browser.post('/admin/users/user/add/', { username: 'grace', email: 'grace@example.com', password1: 'a long enough passphrase', password2: 'a long enough passphrase' });
    expect(added.statusCode).toBe(302);
    expect(await latchkey.users.findByUsername('grace')).toMatchObject({ email: 'grace@example.com' });
  });

  it('refuses someone who is not active staff at the admin login, with the message a wrong password gets, and signs nobody in', async () => {
    await setUp();
    await person('ada');
    const inactive = await person('gone', { isStaff: true });
    await latchkey.deps.store.users.update(inactive.id, { isActive: false });
    for (const username of ['ada', 'gone', 'nobody']) {
      const refused = await adminLogin(username);
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain(STAFF_ONLY.id);
      expect(await sessionUser()).toBeNull();
    }
    // The form carries the CSRF check of every Latchkey form.
    expect((await browser.post('/admin/login/', { username: 'ada', password: ADMIN_PASSWORD }, { csrf: false })).statusCode).toBe(403);
  });

  it('answers 403 to a signed-in user who is not staff, and to staff without the page’s permission', async () => {
    await setUp();
    await person('ada');
    expect((await browser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).statusCode).toBe(302);
    expect((await browser.get('/admin/')).statusCode).toBe(403);
    expect((await browser.get('/admin/users/user/')).statusCode).toBe(403);

    const root = await person('root', { isStaff: true, isSuperuser: true });
    const clerk = await person('clerk', { isStaff: true });
    const other = browser.another();
    await adminLogin('clerk', other);
    expect((await other.get('/admin/')).body).toContain('You don&#39;t have permission to view or edit anything.');
    expect((await other.get('/admin/users/user/')).statusCode).toBe(403);
    await setAdminPermissions(latchkey.deps, root, clerk, [{ model: 'users.user', action: 'view' }], ADMIN_CLIENT);
    expect((await other.get('/admin/users/user/')).statusCode).toBe(200);
  });

  it('asks a superuser with an authenticator app for its code before the admin', async () => {
    await setUp();
    const root = await person('root', { isStaff: true, isSuperuser: true });
    const totp = await activateTotpFor(latchkey, root);
    const started = await adminLogin('root');
    expect(started.headers.location).toBe('/accounts/2fa/authenticate/');
    expect(await sessionUser()).toBeNull();
    expect((await browser.get('/admin/')).headers.location).toBe('/admin/login/?next=%2Fadmin%2F');
    const done = await browser.post('/accounts/2fa/authenticate/', { code: totp.code() });
    expect(done.headers.location).toBe('/admin/');
    expect((await browser.get('/admin/')).statusCode).toBe(200);
  });

  it('with ADMIN_FORCE_ALLAUTH sends the admin login to the account login with its own path as next, and back', async () => {
    await setUp({ ADMIN_FORCE_ALLAUTH: true });
    await person('root', { isStaff: true, isSuperuser: true });
    // As cookiecutter-django's test_admin.py asserts: LOGIN_URL + "?next=" + the admin login's path.
    expect((await browser.get('/admin/login/')).headers.location).toBe('/accounts/login/?next=/admin/login/');
    expect((await browser.get('/admin/login/?next=%2Fadmin%2Fusers%2Fuser%2F')).headers.location).toBe('/accounts/login/?next=/admin/login/%3Fnext%3D/admin/users/user/');
    // Only a same-site next is carried along.
    for (const next of ['https://evil.example/', '//evil.example/', '/\\evil.example/', 'javascript:alert(1)']) {
      expect((await browser.get(`/admin/login/?next=${encodeURIComponent(next)}`)).headers.location, next).toBe('/accounts/login/?next=/admin/login/');
    }
    // The admin's own form does not exist then.
    expect((await adminLogin('root')).headers.location).toBe('/admin/login/');
    expect(await sessionUser()).toBeFalsy();

    // A visit to a page goes the whole way round: the admin login, the account login, the admin login again, the page.
    const toLogin = (await browser.get('/admin/users/user/?is_staff=1')).headers.location as string;
    const toAccounts = (await browser.get(toLogin)).headers.location as string;
    expect(toAccounts).toBe('/accounts/login/?next=/admin/login/%3Fnext%3D/admin/users/user/%253Fis_staff%253D1');
    const form = await browser.get(toAccounts);
    const next = /name="next" value="([^"]+)"/.exec(form.body)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toBe('/admin/login/?next=/admin/users/user/%3Fis_staff%3D1');
    const signedIn = await browser.post('/accounts/login/', { login: 'root', password: ADMIN_PASSWORD, next: next! });
    expect(signedIn.headers.location).toBe(next);
    expect((await browser.get(next!)).headers.location).toBe('/admin/users/user/?is_staff=1');
    expect((await browser.get('/admin/users/user/?is_staff=1')).statusCode).toBe(200);
  });

  it('with ADMIN_FORCE_ALLAUTH refuses a signed-in user who is not staff at the admin login, with 403', async () => {
    await setUp({ ADMIN_FORCE_ALLAUTH: true });
    await person('ada');
    expect((await browser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).statusCode).toBe(302);
    expect((await browser.get('/admin/login/')).statusCode).toBe(403);
    expect((await browser.get('/admin/')).statusCode).toBe(403);
  });

  it('lists users newest first, searches by the start of a username or address, filters, and pages by id', async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true });
    const many: User[] = [];
    for (let index = 0; index < 105; index++) many.push(await createUser(latchkey.deps, { username: `user${String(index).padStart(3, '0')}`, email: `u${index}@example.org`, password: null, emailVerified: false }));
    await createUser(latchkey.deps, { username: 'mallory', email: 'mallory@example.net', name: '<script>alert(1)</script>', password: null, emailVerified: false });
    await adminLogin('root');

    const first = await browser.get('/admin/users/user/');
    expect(first.body).not.toContain('<script>alert(1)</script>');
    expect(first.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const next = /href="(\/admin\/users\/user\/\?after=\d+)"/.exec(first.body)?.[1];
    expect(next).toBeDefined();
    const second = await browser.get(next!.replaceAll('&amp;', '&'));
    // 107 users: 100 on the first page, the oldest 7 on the second, and no further page.
    expect(second.body).toContain('>root</a></td>');
    expect(second.body).toContain('>user000</a></td>');
    expect(second.body).not.toContain('Next page');

    const searched = await browser.get('/admin/users/user/?q=USER10');
    expect(searched.body.match(/>user10\d<\/a><\/td>/g)).toHaveLength(5);
    expect((await browser.get('/admin/users/user/?q=mallory%40example.n')).body).toContain('>mallory</a></td>');
    expect((await browser.get('/admin/users/user/?q=user_')).body).toContain('No user matches.');
    const staffOnly = await browser.get('/admin/users/user/?is_staff=1');
    expect(staffOnly.body).toContain('>root</a></td>');
    expect(staffOnly.body).not.toContain('>user000</a></td>');
    const oldestFirst = (await browser.get('/admin/users/user/?o=id')).body;
    expect(oldestFirst.indexOf('>root</a></td>')).toBeLessThan(oldestFirst.indexOf('>user000</a></td>'));
  });

  it('has a page for API tokens only when the project serves the API layer', async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true });
    await adminLogin('root');
    expect((await browser.get('/admin/')).body).not.toContain('/admin/authtoken/tokenproxy/');
    expect((await browser.get('/admin/authtoken/tokenproxy/')).statusCode).toBe(404);
    const withApi = await PageClient.create(latchkey, { plugin: { api: {} } });
    await adminLogin('root', withApi);
    expect((await withApi.get('/admin/')).body).toContain('href="/admin/authtoken/tokenproxy/"');
    await withApi.close();
  });

  it('lives at ADMIN_URL only', async () => {
    await setUp({ ADMIN_URL: 'staff-7f3k2x/' });
    await person('root', { isStaff: true, isSuperuser: true });
    expect((await browser.get('/admin/')).statusCode).toBe(404);
    expect((await browser.get('/admin/login/')).statusCode).toBe(404);
    expect((await browser.post('/staff-7f3k2x/login/', { username: 'root', password: ADMIN_PASSWORD, next: '/staff-7f3k2x/' })).headers.location).toBe('/staff-7f3k2x/');
    expect((await browser.get('/staff-7f3k2x/')).body).toContain('href="/staff-7f3k2x/users/user/"');
  });
});
