/**
 * ACCOUNT_LOGIN_BY_CODE_REQUIRED on the pages: a password, admin or provider login stops at
 * /accounts/login/code/confirm/ for the mailed code, and only then goes on (to the MFA page for
 * a user with a second factor).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { dummyProviders, throughDummy } from '../../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const CONFIRM_PAGE = '/accounts/login/code/confirm/';

describe.each(testDatabaseKinds())('a code required at login, on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_REQUIRED: true, ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true, isStaff: true });
  }

  function mailedCode(address = 'ada@example.com'): string {
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
    if (code === undefined) throw new Error(`no code was mailed to ${address}`);
    return code;
  }

  const signedInUser = async (client = browser) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
  const logIn = (next = '') => browser.post('/accounts/login/', { login: 'ada', password: PASSWORD, ...(next === '' ? {} : { next }) });

  it('stops the password login at the code page, refuses a wrong code, and signs in with the right one, to next', async () => {
    await setUp();
    const login = await logIn('/accounts/email/');
    expect(login.statusCode).toBe(302);
    expect(login.headers.location).toBe(CONFIRM_PAGE);
    expect(await signedInUser()).toBeNull();
    const page = await browser.get(CONFIRM_PAGE);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('name="code"');
    expect(page.body).toContain('we have sent one to ada@example.com');
    const code = mailedCode();
    const wrong = await browser.post(CONFIRM_PAGE, { code: wrongFor(code) });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('Incorrect code.');
    expect(await signedInUser()).toBeNull();
    const right = await browser.post(CONFIRM_PAGE, { code });
    expect(right.statusCode).toBe(302);
    expect(right.headers.location).toBe('/accounts/email/');
    expect(await signedInUser()).toBe(ada.id);
  });

  it('asks a TOTP user for the authenticator code after the mailed one, and the MFA page cannot be reached before it', async () => {
    await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    expect((await logIn()).headers.location).toBe(CONFIRM_PAGE);
    // The second step's page belongs to a login waiting at it: this one waits for the mailed code.
    expect((await browser.get('/accounts/2fa/authenticate/')).headers.location).toBe('/accounts/login/');
    const skipped = await browser.post('/accounts/2fa/authenticate/', { code: totp.code() });
    expect(skipped.headers.location).toBe('/accounts/login/');
    expect(await signedInUser()).toBeNull();
    const afterCode = await browser.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(afterCode.headers.location).toBe('/accounts/2fa/authenticate/');
    expect(await signedInUser()).toBeNull();
    const done = await browser.post('/accounts/2fa/authenticate/', { code: totp.code() });
    expect(done.statusCode).toBe(302);
    expect(await signedInUser()).toBe(ada.id);
  });

  it('after MAX_ATTEMPTS wrong codes the right one no longer signs in: the login ends and the person is told to sign in again', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 2 });
    await logIn();
    const code = mailedCode();
    for (let attempt = 0; attempt < 2; attempt += 1) expect((await browser.post(CONFIRM_PAGE, { code: wrongFor(code) })).statusCode).toBe(400);
    const late = await browser.post(CONFIRM_PAGE, { code });
    expect(late.headers.location).toBe('/accounts/login/');
    expect(await signedInUser()).toBeNull();
    expect((await browser.get('/accounts/login/')).body).toContain('Sign in again to have a new one sent.');
    // Nothing waits any more: the code page sends the browser to ask for a code or sign in.
    expect((await browser.get(CONFIRM_PAGE)).statusCode).toBe(302);
  });

  it('refuses the code after ACCOUNT_LOGIN_BY_CODE_TIMEOUT (the site clock moved on)', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180 });
    await logIn();
    latchkey.clock.advance(181_000);
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode() })).headers.location).toBe('/accounts/login/');
    expect(await signedInUser()).toBeNull();
  });

  it('takes the code only in the browser whose login asked for it', async () => {
    await setUp();
    await logIn();
    const other = browser.another();
    const elsewhere = await other.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(elsewhere.statusCode).toBe(302);
    expect(await signedInUser(other)).toBeNull();
    // The code is still good where it was asked for.
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode() })).statusCode).toBe(302);
    expect(await signedInUser()).toBe(ada.id);
  });

  it("with ['socialaccount'], leaves password logins alone and stops a provider's sign-in", async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_REQUIRED: ['socialaccount'], SOCIALACCOUNT_PROVIDERS: dummyProviders() });
    expect((await logIn()).headers.location).toBe('/');
    expect(await signedInUser()).toBe(ada.id);
    expect(latchkey.mailer.outbox).toEqual([]);
    const stranger = browser.another();
    const signIn = await throughDummy(stranger, { id: 'grace-1906', email: 'grace@example.com', email_verified: 'true', name: 'Grace Hopper' });
    expect(signIn.headers.location).toBe(CONFIRM_PAGE);
    expect(await signedInUser(stranger)).toBeNull();
    expect((await stranger.post(CONFIRM_PAGE, { code: mailedCode('grace@example.com') })).statusCode).toBe(302);
    expect(await signedInUser(stranger)).not.toBeNull();
  });

  it("stops the admin's own login form at the code page too, then goes on to the admin", async () => {
    await setUp();
    const login = await browser.post('/admin/login/', { username: 'ada', password: PASSWORD, next: '/admin/' });
    expect(login.headers.location).toBe(CONFIRM_PAGE);
    expect(await signedInUser()).toBeNull();
    const done = await browser.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(done.headers.location).toBe('/admin/');
    expect(await signedInUser()).toBe(ada.id);
  });
});
