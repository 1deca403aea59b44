import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('login and logout pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(verification: 'mandatory' | 'optional' = 'optional', verified = true) {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: verification } });
    browser = await PageClient.create(latchkey);
    return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: verified });
  }

  it('shows the form with a CSRF field and allauth field names, and signs in', async () => {
    const user = await setUp();
    const page = await browser.get('/accounts/login/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    for (const name of ['csrfmiddlewaretoken', 'login', 'password', 'remember']) expect(page.body).toContain(`name="${name}"`);
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD, next: '/accounts/email/' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/accounts/email/');
    expect(await latchkey.deps.sessions.load(browser.cookies.get('sessionid'))).toMatchObject({ userId: user.id });
    expect((await latchkey.deps.store.auditLog.listForUser(user.id)).map((record) => record.event)).toContain('user_logged_in');
  });

  it('refuses wrong credentials with one generic message and keeps no session', async () => {
    await setUp();
    const response = await browser.post('/accounts/login/', { login: 'ada', password: 'wrong password' });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('The username and/or password you specified are not correct.');
    expect(await latchkey.deps.sessions.load(browser.cookies.get('sessionid'))).toBeFalsy();
  });

  it('ignores a next that leaves the site', async () => {
    await setUp();
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD, next: '//evil.com' });
    expect(response.headers.location).toBe('/');
  });

  it('under mandatory verification, stops an unverified account at the verification page and mails again', async () => {
    await setUp('mandatory', false);
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('Verify your email address');
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(latchkey.mailer.outbox[0]!.text).toContain('http://testserver/accounts/confirm-email/');
    expect(browser.cookies.get('sessionid')).toBeUndefined();
  });

  it('sends an inactive account with the right password to the inactive page', async () => {
    const user = await setUp();
    await latchkey.deps.store.users.update(user.id, { isActive: false });
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(response.headers.location).toBe('/accounts/inactive/');
  });

  it('logout: GET asks and changes nothing; POST ends the session', async () => {
    await setUp();
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const session = browser.cookies.get('sessionid');
    const ask = await browser.get('/accounts/logout/');
    expect(ask.body).toContain('Are you sure you want to sign out?');
    expect(await latchkey.deps.sessions.load(session)).toBeDefined();
    const done = await browser.post('/accounts/logout/', {});
    expect(done.statusCode).toBe(302);
    expect(await latchkey.deps.sessions.load(session)).toBeUndefined();
    expect((await browser.get('/')).statusCode).toBe(404);
  });

  it('refuses a login POST without the CSRF token', async () => {
    await setUp();
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD }, { csrf: false });
    expect(response.statusCode).toBe(403);
  });
});
