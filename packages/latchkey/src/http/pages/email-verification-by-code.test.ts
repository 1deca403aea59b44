/**
 * Email verification by code (ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED) on the pages: the code
 * mailed at signup, at a login waiting at verify_email, or for an added address is typed in at
 * /accounts/confirm-email/, in the browser it was mailed for.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const CONFIRM_PAGE = '/accounts/confirm-email/';

describe.each(testDatabaseKinds())('email verification by code on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true, ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: false, ...settings },
    });
    browser = await PageClient.create(latchkey);
  }

  function mailedCode(address = 'grace@example.com'): string {
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
    if (code === undefined) throw new Error(`no code was mailed to ${address}`);
    return code;
  }

  const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
  const signedInUser = async (client = browser) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const isVerified = async (email: string) => (await latchkey.deps.store.emailAddresses.listByEmail(email)).some((address) => address.verified);
  const signUp = (as = browser, email = 'grace@example.com') =>
    as.post('/accounts/signup/', { username: email.split('@')[0]!, email, password1: PASSWORD, password2: PASSWORD });

  it('after signup asks for the mailed code, refuses a wrong one, and signs the person in with the right one', async () => {
    await setUp();
    const signup = await signUp();
    expect(signup.headers.location).toBe(CONFIRM_PAGE);
    expect(latchkey.mailer.lastTo('grace@example.com')!.text).not.toContain(CONFIRM_PAGE);
    const form = await browser.get(CONFIRM_PAGE);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="code"');
    expect(form.body).toContain('grace@example.com');
    const code = mailedCode();
    const wrong = await browser.post(CONFIRM_PAGE, { code: wrongFor(code) });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('Incorrect code.');
    expect(await signedInUser()).toBeNull();
    // ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION is off, yet the code proves this browser: signed in.
    const right = await browser.post(CONFIRM_PAGE, { code });
    expect(right.statusCode).toBe(302);
    expect(right.headers.location).toBe('/');
    expect(await signedInUser()).not.toBeNull();
    expect(await isVerified('grace@example.com')).toBe(true);
  });

  it('a code works once', async () => {
    await setUp();
    await signUp();
    const code = mailedCode();
    await browser.post(CONFIRM_PAGE, { code });
    await browser.post('/accounts/logout/', {});
    const again = await browser.post(CONFIRM_PAGE, { code });
    expect(again.headers.location).toBe('/accounts/login/');
    expect(await signedInUser()).toBeNull();
  });

  it('after MAX_ATTEMPTS wrong codes even the right one fails; the login ends and signing in again mails a new code', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 3 });
    await signUp();
    const code = mailedCode();
    for (let attempt = 0; attempt < 3; attempt += 1) expect((await browser.post(CONFIRM_PAGE, { code: wrongFor(code) })).statusCode).toBe(400);
    const late = await browser.post(CONFIRM_PAGE, { code });
    expect(late.headers.location).toBe('/accounts/login/');
    expect(await signedInUser()).toBeNull();
    expect(await isVerified('grace@example.com')).toBe(false);
    expect((await browser.get('/accounts/login/')).body).toContain('Sign in again to have a new one sent.');
    latchkey.clock.advance(181_000);
    expect((await browser.post('/accounts/login/', { login: 'grace', password: PASSWORD })).headers.location).toBe(CONFIRM_PAGE);
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode() })).headers.location).toBe('/');
    expect(await signedInUser()).not.toBeNull();
  });

  it('takes the code only in the browser it was mailed for', async () => {
    await setUp();
    await signUp();
    const other = browser.another();
    const elsewhere = await other.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(elsewhere.headers.location).toBe('/accounts/login/');
    expect(await signedInUser(other)).toBeNull();
    expect(await isVerified('grace@example.com')).toBe(false);
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode() })).headers.location).toBe('/');
  });

  it('refuses a code after ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT (the site clock moved on)', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT: 300 });
    await signUp();
    latchkey.clock.advance(300_000);
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode() })).headers.location).toBe('/accounts/login/');
    expect(await isVerified('grace@example.com')).toBe(false);
  });

  it('sends a new code on request, within the confirm_email limit, and only the new one works', async () => {
    await setUp();
    await signUp();
    const first = mailedCode();
    expect((await browser.post(CONFIRM_PAGE, { action_resend: '1' })).statusCode).toBe(429);
    latchkey.clock.advance(181_000);
    expect((await browser.post(CONFIRM_PAGE, { action_resend: '1' })).headers.location).toBe(CONFIRM_PAGE);
    const second = mailedCode();
    if (second !== first) expect((await browser.post(CONFIRM_PAGE, { code: first })).statusCode).toBe(400);
    expect((await browser.post(CONFIRM_PAGE, { code: second })).headers.location).toBe('/');
  });

  it('verifies an added address by its code, then back to the email page', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const added = await browser.post('/accounts/email/', { email: 'second@example.com', action_add: '' });
    expect(added.headers.location).toBe(CONFIRM_PAGE);
    expect((await browser.get(CONFIRM_PAGE)).body).toContain('second@example.com');
    const code = mailedCode('second@example.com');
    expect((await browser.post(CONFIRM_PAGE, { code: wrongFor(code) })).statusCode).toBe(400);
    const confirmed = await browser.post(CONFIRM_PAGE, { code });
    expect(confirmed.headers.location).toBe('/accounts/email/');
    expect(await isVerified('second@example.com')).toBe(true);
    expect((await browser.get('/accounts/email/')).body).toContain('You have confirmed second@example.com.');
  });

  it('under optional verification, the code mailed at signup can be typed in once signed in', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional' });
    const signup = await signUp();
    expect(signup.headers.location).toBe('/');
    expect(await signedInUser()).not.toBeNull();
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode() })).headers.location).toBe('/accounts/email/');
    expect(await isVerified('grace@example.com')).toBe(true);
  });

  it('asks a TOTP user with an unverified address for the code, then for the second factor', async () => {
    await setUp();
    const ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const totp = await activateTotpFor(latchkey, ada);
    await latchkey.database.kysely.updateTable('latchkey_email_addresses').set({ verified: 0 }).where('user_id', '=', ada.id).execute();
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe(CONFIRM_PAGE);
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode('ada@example.com') })).headers.location).toBe('/accounts/2fa/authenticate/');
    expect(await signedInUser()).toBeNull();
    expect((await browser.post('/accounts/2fa/authenticate/', { code: totp.code() })).statusCode).toBe(302);
    expect(await signedInUser()).toBe(ada.id);
  });

  it("stops the admin's own login form at the code page too", async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: false, isStaff: true });
    const login = await browser.post('/admin/login/', { username: 'ada', password: PASSWORD, next: '/admin/' });
    expect(login.headers.location).toBe(CONFIRM_PAGE);
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode('ada@example.com') })).headers.location).toBe('/admin/');
  });
});
