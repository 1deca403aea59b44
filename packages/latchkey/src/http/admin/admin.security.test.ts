/**
 * The admin under attack, on each database: every form under a cross-site request (a POST
 * without the CSRF token is refused with 403 on each of them, and nothing changes); the admin's
 * path guessed under production settings that hide it; and guessing passwords at the admin's
 * login, which shares the account login's limits. (Swapped ids in URLs: admin.idor.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TOO_MANY_ATTEMPTS } from '../../account/credentials.js';
import { STAFF_ONLY } from '../../admin/flows/admin-login.js';
import { ADMIN_PASSWORD, addPerson, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';
import { issueApiToken } from '../../tokens/api-tokens.js';


describe.each(testDatabaseKinds())('the admin’s forms against CSRF on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  it('refuses a POST without the CSRF token on every form, changing nothing', async () => {
    // The project serves the API layer (use_drf=y): its tokens have admin pages.
    ({ latchkey, browser } = await openAdmin(kind, { plugin: { api: {} } }));
    await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const ada = await addPerson(latchkey, 'ada');
    const address = await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'ada.work@example.com', verified: false, primary: false });
    await issueApiToken(latchkey.deps, ada);
    const totp = await activateTotpFor(latchkey, ada);
    const adaBrowser = browser.another();
    await adaBrowser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD });
    await adaBrowser.post('/accounts/2fa/authenticate/', { code: totp.code() });
    const [session] = await latchkey.deps.store.sessions.listForUser(ada.id);
    const [authenticator] = await latchkey.deps.store.authenticators.listForUser(ada.id);
    const now = latchkey.clock.now();
    const account = await latchkey.deps.store.socialAccounts.create({ userId: ada.id, provider: 'corp', uid: 'ada-at-corp', extraData: {}, dateJoined: now, lastLogin: now });
    const app = await latchkey.deps.store.socialApps.create({ provider: 'openid_connect', providerId: 'corp', name: 'Corp', clientId: 'c', sealedSecret: '', key: '', settings: { server_url: 'https://id.example.com' } });
    expect(session && authenticator).toBeTruthy();
    expect((await signInToAdmin(browser, 'root')).headers.location).toBe('/admin/');
    const before = JSON.stringify(await snapshot());

    const forms: [string, Record<string, string>][] = [
      ['/admin/logout/', {}],
      ['/admin/users/user/', { action: 'delete_selected', _selected_action: String(ada.id), post: 'yes' }],
      ['/admin/users/user/add/', { username: 'eve', email: 'eve@example.com', password1: ADMIN_PASSWORD, password2: ADMIN_PASSWORD }],
      [`/admin/users/user/${ada.id}/change/`, { name: 'Changed', is_staff: 'on', is_superuser: 'on' }],
      [`/admin/users/user/${ada.id}/password/`, { usable: '' }],
      [`/admin/users/user/${ada.id}/sessions/end/`, {}],
      [`/admin/users/user/${ada.id}/delete/`, {}],
      ['/admin/account/emailaddress/', { action: 'mark_verified', _selected_action: String(address.id), post: 'yes' }],
      ['/admin/socialaccount/socialapp/add/', { provider: 'openid_connect', provider_id: 'evil', client_id: 'x', settings: '{"server_url":"https://evil.example"}' }],
      [`/admin/socialaccount/socialapp/${app.id}/change/`, { provider: 'openid_connect', provider_id: 'corp', client_id: 'stolen', settings: '{}' }],
      [`/admin/socialaccount/socialapp/${app.id}/delete/`, {}],
      [`/admin/socialaccount/socialaccount/${account.id}/delete/`, {}],
      ['/admin/authtoken/tokenproxy/add/', { user: 'ada' }],
      [`/admin/authtoken/tokenproxy/${ada.id}/delete/`, {}],
      [`/admin/mfa/authenticator/${authenticator!.id}/delete/`, {}],
      [`/admin/sessions/session/${session!.idHash}/delete/`, {}],
      [`/admin/sessions/session/user/${ada.id}/delete/`, {}],
    ];
    for (const [url, fields] of forms) {
      expect((await browser.post(url, fields, { csrf: false })).statusCode, url).toBe(403);
    }
    expect(JSON.stringify(await snapshot())).toBe(before);
    // Still signed in: the logout without a token did nothing either.
    expect((await browser.get('/admin/')).statusCode).toBe(200);

    async function snapshot() {
      const store = latchkey.deps.store;
      return {
        users: await store.users.search({ order: 'id', limit: 10 }),
        addresses: await store.emailAddresses.listForUser(ada.id),
        sessions: (await store.sessions.listForUser(ada.id)).map((each) => each.idHash),
        token: (await store.apiTokens.findForUser(ada.id))?.createdAt,
        authenticators: (await store.authenticators.listForUser(ada.id)).map((each) => each.id),
        socialAccounts: await store.socialAccounts.listForUser(ada.id),
        socialApps: await store.socialApps.list(),
      };
    }
  });
});

describe.each(testDatabaseKinds())('the admin’s path under production settings on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  it('is not at /admin/ when LATCHKEY_ADMIN_URL hides it: a guess answers 404 and names nothing', async () => {
    latchkey = await createTestLatchkey({
      kind,
      env: {
        NODE_ENV: 'production',
        LATCHKEY_SECRET_KEY: 'k'.repeat(50),
        LATCHKEY_ALLOWED_HOSTS: 'testserver',
        LATCHKEY_ADMIN_URL: 'staff-xyz/',
        DATABASE_URL: 'sqlite::memory:',
        EMAIL_URL: 'console://',
      },
    });
    browser = await PageClient.create(latchkey);
    expect(latchkey.settings.ADMIN_URL).toBe('staff-xyz/');
    await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    for (const guess of ['/admin/', '/admin/login/', '/admin/users/user/', '/admin/logout/']) {
      const answer = await browser.get(guess);
      expect(answer.statusCode, guess).toBe(404);
      expect(answer.headers.location, guess).toBeUndefined();
      expect(answer.body, guess).not.toContain('staff-xyz');
    }
    expect((await browser.post('/admin/login/', { username: 'root', password: ADMIN_PASSWORD, next: '/admin/' })).statusCode).toBe(404);
    expect(await latchkey.deps.store.sessions.listForUser((await latchkey.deps.store.users.findByUsername('root'))!.id)).toEqual([]);

    // The real path works, and sends a visitor to its own login, not to a guessable one.
    expect((await browser.get('/staff-xyz/')).headers.location).toBe('/staff-xyz/login/?next=%2Fstaff-xyz%2F');
    const signedIn = await browser.post('/staff-xyz/login/', { username: 'root', password: ADMIN_PASSWORD, next: '/staff-xyz/' });
    expect(signedIn.headers.location).toBe('/staff-xyz/');
    const index = await browser.get('/staff-xyz/');
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('href="/staff-xyz/users/user/"');
    // Signed in, the old path is still nothing.
    expect((await browser.get('/admin/users/user/')).statusCode).toBe(404);
  });
});

describe.each(testDatabaseKinds())('the admin login against guessing on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  it('refuses too many wrong passwords as the account login does, on counters the two share', async () => {
    ({ latchkey, browser } = await openAdmin(kind));
    const root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    // Three guesses at the account login and two at the admin's: five on one account, its limit.
    for (let i = 0; i < 3; i++) expect((await browser.post('/accounts/login/', { login: 'root', password: `wrong ${i}` })).statusCode).toBe(400);
    for (let i = 3; i < 5; i++) {
      const refused = await browser.post('/admin/login/', { username: 'root', password: `wrong ${i}`, next: '/admin/' });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain(STAFF_ONLY.id);
    }
    // Now even the right password is refused, at either door, with too-many-attempts and when to come back.
    const locked = await browser.post('/admin/login/', { username: 'root', password: ADMIN_PASSWORD, next: '/admin/' });
    expect(locked.statusCode).toBe(429);
    expect(locked.body).toContain(TOO_MANY_ATTEMPTS);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await browser.post('/accounts/login/', { login: 'root', password: ADMIN_PASSWORD })).statusCode).toBe(429);
    expect(await latchkey.deps.store.sessions.listForUser(root.id)).toEqual([]);
    // Once the window has passed, the admin login lets the right password in.
    latchkey.clock.advance(5 * 60 * 1000 + 1000);
    expect((await signInToAdmin(browser, 'root')).headers.location).toBe('/admin/');
  });

  it('lets a superuser in from their own address after a stranger’s 101 wrong passwords from one address', async () => {
    ({ latchkey, browser } = await openAdmin(kind));
    const root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const stranger = browser.another({ ip: '203.0.113.66' });
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) statuses.push((await stranger.post('/admin/login/', { username: 'root', password: `wrong ${i}`, next: '/admin/' })).statusCode);
    // Five guesses checked (five in five minutes for one account from one address), 96 refused unchecked.
    expect(statuses.filter((status) => status === 400)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(96);
    expect((await stranger.post('/admin/login/', { username: 'root', password: ADMIN_PASSWORD, next: '/admin/' })).statusCode).toBe(429);
    expect((await signInToAdmin(browser, 'root')).headers.location).toBe('/admin/');
    expect(await latchkey.deps.store.sessions.listForUser(root.id)).toHaveLength(1);
  });

  it('counts the admin login’s wrong passwords against the account login too', async () => {
    ({ latchkey, browser } = await openAdmin(kind));
    await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    for (let i = 0; i < 5; i++) expect((await browser.post('/admin/login/', { username: 'ROOT', password: `wrong ${i}`, next: '/admin/' })).statusCode).toBe(400);
    const locked = await browser.post('/accounts/login/', { login: 'root', password: ADMIN_PASSWORD });
    expect(locked.statusCode).toBe(429);
    expect(locked.body).toContain(TOO_MANY_ATTEMPTS);
  });
});
