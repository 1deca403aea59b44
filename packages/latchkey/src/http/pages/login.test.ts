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

  async function setUp(verification: 'mandatory' | 'optional' = 'optional', verified = true, loginOnConfirmation = false) {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: verification, ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: loginOnConfirmation } });
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
    // Signed in with an address, the refusal speaks of the address, as allauth's does, whether
    // the address has an account or not.
    for (const login of ['ada@example.com', 'nobody@example.com']) {
      const byAddress = await browser.post('/accounts/login/', { login, password: 'wrong password' });
      expect(byAddress.body, login).toContain('The email address and/or password you specified are not correct.');
    }
  });

  it('refuses an empty login and an empty password under their fields, both at once, keeping what was typed', async () => {
    await setUp();
    const response = await browser.post('/accounts/login/', { login: '  ', password: '' });
    expect(response.statusCode).toBe(400);
    expect(response.body).toMatch(/id="login-errors"><li>This field is required\.<\/li>/);
    expect(response.body).toMatch(/id="password-errors"><li>This field is required\.<\/li>/);
    expect(response.body).not.toContain('are not correct');
    const passwordOnly = await browser.post('/accounts/login/', { login: 'ada', password: '' });
    expect(passwordOnly.body).toContain('value="ada"');
    expect(passwordOnly.body).not.toContain('id="login-errors"');
    expect(passwordOnly.body).toMatch(/id="password-errors"><li>This field is required\.<\/li>/);
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
    // The browser holds only the pending login, in an anonymous session: nobody is signed in.
    expect((await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId).toBeNull();
  });

  it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION, confirming the mailed link in the same browser finishes the pending login, to next', async () => {
    const user = await setUp('mandatory', false, true);
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD, next: '/accounts/email/' });
    const link = /http:\/\/testserver(\/accounts\/confirm-email\/[^/\s]+\/)/.exec(latchkey.mailer.outbox[0]!.text)![1]!;
    const confirmed = await browser.post(link, {});
    expect(confirmed.headers.location).toBe('/accounts/email/');
    expect(await latchkey.deps.sessions.load(browser.cookies.get('sessionid'))).toMatchObject({ userId: user.id });
  });

  it('the pending login is bound to its browser and expires after ACCOUNT_LOGIN_TIMEOUT', async () => {
    await setUp('mandatory', false, true);
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const link = /http:\/\/testserver(\/accounts\/confirm-email\/[^/\s]+\/)/.exec(latchkey.mailer.outbox[0]!.text)![1]!;
    // Another browser confirms the address but is not signed in.
    const elsewhere = browser.another();
    expect((await elsewhere.post(link, {})).headers.location).toBe('/accounts/login/');
    expect((await latchkey.deps.sessions.load(elsewhere.cookies.get('sessionid')))?.userId ?? null).toBeNull();

    // In the first browser, the pending login has expired by the time a new link is used.
    const [user] = [await latchkey.deps.store.users.findByUsername('ada')];
    await latchkey.deps.store.emailAddresses.add({ userId: user!.id, email: 'second@example.com', verified: false, primary: false });
    const second = (await latchkey.deps.store.emailAddresses.findForUser(user!.id, 'second@example.com'))!;
    const { makeConfirmationKey } = await import('../../account/email-confirmation.js');
    latchkey.clock.advance(latchkey.settings.ACCOUNT_LOGIN_TIMEOUT * 1000 + 1000);
    const late = await browser.post(`/accounts/confirm-email/${makeConfirmationKey(latchkey.deps, second)}/`, {});
    expect(late.headers.location).toBe('/accounts/login/');
    expect((await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId ?? null).toBeNull();
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

describe.each(testDatabaseKinds())('LOGIN_REDIRECT_URL and LOGOUT_REDIRECT_URL on %s', (kind) => {
  const LANDING = '/users/~redirect/';
  const GOODBYE = '/goodbye/';
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(verification: 'mandatory' | 'optional' = 'optional', verified = true, loginOnConfirmation = false) {
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: verification, ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: loginOnConfirmation, LOGIN_REDIRECT_URL: LANDING, LOGOUT_REDIRECT_URL: GOODBYE },
    });
    browser = await PageClient.create(latchkey);
    return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: verified });
  }
  const signedInUserId = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;

  it('a login without next lands on LOGIN_REDIRECT_URL, and so does one whose next leaves the site', async () => {
    const user = await setUp();
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(LANDING);
    expect(await signedInUserId(browser)).toBe(user.id);

    const elsewhere = browser.another();
    expect((await elsewhere.post('/accounts/login/', { login: 'ada', password: PASSWORD, next: '//evil.com' })).headers.location).toBe(LANDING);
    // A safe next still wins over the setting.
    const third = browser.another();
    expect((await third.post('/accounts/login/', { login: 'ada', password: PASSWORD, next: '/accounts/email/' })).headers.location).toBe('/accounts/email/');
  });

  it('a signed-in visitor at the login or signup page is sent to LOGIN_REDIRECT_URL', async () => {
    await setUp();
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect((await browser.get('/accounts/login/')).headers.location).toBe(LANDING);
    expect((await browser.get('/accounts/signup/')).headers.location).toBe(LANDING);
  });

  it('a signup that signs in lands on LOGIN_REDIRECT_URL', async () => {
    await setUp();
    const response = await browser.post('/accounts/signup/', { email: 'grace@example.com', username: 'grace', password1: PASSWORD, password2: PASSWORD });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(LANDING);
    const grace = await latchkey.deps.store.users.findByUsername('grace');
    expect(await signedInUserId(browser)).toBe(grace!.id);
  });

  it('a login finished by confirming the mailed link, without next, lands on LOGIN_REDIRECT_URL', async () => {
    const user = await setUp('mandatory', false, true);
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const link = /http:\/\/testserver(\/accounts\/confirm-email\/[^/\s]+\/)/.exec(latchkey.mailer.outbox[0]!.text)![1]!;
    const confirmed = await browser.post(link, {});
    expect(confirmed.headers.location).toBe(LANDING);
    expect(await signedInUserId(browser)).toBe(user.id);
  });

  it('logout lands on LOGOUT_REDIRECT_URL, and so does the logout page for a visitor who is not signed in', async () => {
    await setUp();
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const done = await browser.post('/accounts/logout/', {});
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe(GOODBYE);
    expect(await signedInUserId(browser)).toBeNull();
    expect((await browser.get('/accounts/logout/')).headers.location).toBe(GOODBYE);
  });
});

describe("the login field's label", () => {
  it.each([
    ['username', ['username'], '>Username<'],
    ['username', ['email'], '>Email<'],
    ['username', ['username', 'email'], '>Username or email<'],
    ['email', ['email'], '>Email<'],
  ] as const)('in a %s project signing in by %j reads %s', async (usernameType, methods, label) => {
    const latchkey = await createTestLatchkey({ usernameType, settings: { ACCOUNT_LOGIN_METHODS: [...methods] } });
    const browser = await PageClient.create(latchkey);
    try {
      const page = await browser.get('/accounts/login/');
      expect(page.body).toMatch(new RegExp(`<label for="id_login"[^>]*${label}`));
    } finally {
      await browser.close();
      await latchkey.destroy();
    }
  });
});
