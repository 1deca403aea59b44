/**
 * Passkey signup through the pages (MFA_PASSKEY_SIGNUP_ENABLED), as allauth's: the form without a
 * password at /accounts/signup/passkey/, the mailed code at /accounts/confirm-email/, then the
 * account's passkey at /accounts/2fa/webauthn/signup/, which signs the person in; a taken address
 * answered alike, a bad passkey, a browser with nothing waiting, CSRF, and the setting off; on
 * every database. The passkey is made by a software authenticator answering the page's options.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { SoftwareAuthenticator } from '../../testing/webauthn-authenticator.js';
import { creationOptionsFrom, fieldErrors, postAssertion } from '../../testing/webauthn-pages.js';

const SIGNUP = '/accounts/signup/passkey/';
const CONFIRM = '/accounts/confirm-email/';
const PASSKEY_STEP = '/accounts/2fa/webauthn/signup/';
const REFUSED = 'The security key could not be verified. Please try again.';
const PASSKEY_SIGNUP: Partial<SettingValues> = {
  ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true,
  MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'],
  MFA_PASSKEY_LOGIN_ENABLED: true,
  MFA_PASSKEY_SIGNUP_ENABLED: true,
};

describe.each(testDatabaseKinds())('passkey signup pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = PASSKEY_SIGNUP) {
    latchkey = await createTestLatchkey({ kind, settings });
    browser = await PageClient.create(latchkey);
  }

  /** The code in the latest mail to `email`, as a person would copy it. */
  function mailedCode(email: string): string {
    const mail = latchkey.mailer.outbox.filter((each) => each.to.includes(email)).at(-1);
    const code = /enter this code where you were asked for it:\s+(\S+)/.exec(mail?.text ?? '');
    if (!code) throw new Error(`No code mailed to ${email}: ${mail?.text}`);
    return code[1]!;
  }

  const signedInUserId = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;

  /** The form, then the mailed code: the browser now waits at the passkey step. */
  async function signUpAndConfirm(client: PageClient, email = 'ada@example.com') {
    const signedUp = await client.post(SIGNUP, { email, username: 'ada' });
    expect(signedUp.headers.location).toBe(CONFIRM);
    const confirmed = await client.post(CONFIRM, { code: mailedCode(email) });
    expect(confirmed.headers.location).toBe(PASSKEY_STEP);
  }

  it('signs up with an address and a passkey, never a password, and signs in with the passkey later', async () => {
    await setUp();
    expect((await browser.get('/accounts/signup/')).body).toContain(`href="${SIGNUP}"`);
    const form = await browser.get(SIGNUP);
    expect(form.statusCode).toBe(200);
    for (const name of ['email', 'username']) expect(form.body).toContain(`name="${name}"`);
    expect(form.body).not.toContain('name="password1"');

    await signUpAndConfirm(browser);
    expect(await signedInUserId(browser)).toBeNull();
    const step = await browser.get(PASSKEY_STEP);
    expect(step.statusCode).toBe(200);
    expect(step.body).toContain('data-webauthn="create"');
    expect(step.body).toContain('>Create passkey</button>');
    const options = await creationOptionsFrom(browser, PASSKEY_STEP);
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });

    const key = new SoftwareAuthenticator('http://testserver');
    const done = await browser.post(PASSKEY_STEP, { name: 'My phone', credential: JSON.stringify(key.create(options)) });
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe(latchkey.settings.LOGIN_REDIRECT_URL);
    const ada = await latchkey.deps.store.users.findByEmail('ada@example.com');
    expect(await signedInUserId(browser)).toBe(ada!.id);
    const authenticators = await latchkey.deps.store.authenticators.listForUser(ada!.id);
    expect(authenticators.map((each) => [each.type, each.data.name, each.data.passwordless])).toEqual([['webauthn', 'My phone', true]]);

    await browser.post('/accounts/logout/', {});
    expect((await postAssertion(browser, key, '/accounts/2fa/webauthn/login/')).statusCode).toBe(302);
    expect(await signedInUserId(browser)).toBe(ada!.id);
  });

  it('a bad passkey is a form error and the signup keeps waiting for a good one', async () => {
    await setUp();
    await signUpAndConfirm(browser);
    const key = new SoftwareAuthenticator('http://testserver');
    const foreign = await browser.post(PASSKEY_STEP, { credential: JSON.stringify(key.create(await creationOptionsFrom(browser, PASSKEY_STEP), { origin: 'https://evil.example' })) });
    expect(foreign.statusCode).toBe(400);
    expect(fieldErrors(foreign.body, 'credential')).toEqual([REFUSED]);
    expect(fieldErrors((await browser.post(PASSKEY_STEP, { credential: 'nope' })).body, 'credential')).toEqual([REFUSED]);
    expect(await signedInUserId(browser)).toBeNull();
    const done = await browser.post(PASSKEY_STEP, { credential: JSON.stringify(key.create(await creationOptionsFrom(browser, PASSKEY_STEP))) });
    expect(done.statusCode).toBe(302);
    expect(await signedInUserId(browser)).not.toBeNull();
  });

  it('an address that has an account is answered alike, and makes no account', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'bea', email: 'bea@example.com', password: 'a long enough passphrase', emailVerified: true });
    const answer = await browser.post(SIGNUP, { email: 'bea@example.com', username: 'bea2' });
    expect(answer.headers.location).toBe(CONFIRM);
    expect((await browser.get(CONFIRM)).body).toContain('name="code"');
    expect(await latchkey.deps.store.users.findByUsername('bea2')).toBeUndefined();
  });

  it('the passkey step serves only a browser whose signup waits there', async () => {
    await setUp();
    expect((await browser.get(PASSKEY_STEP)).headers.location).toBe(SIGNUP);
    const options = await browser.get(PASSKEY_STEP, { accept: 'application/json' });
    expect(options.statusCode).toBe(409);
    expect((await browser.post(PASSKEY_STEP, { credential: '{}' })).headers.location).toBe('/accounts/login/');
    // A signup that has not given its code yet is not there either.
    await browser.post(SIGNUP, { email: 'ada@example.com', username: 'ada' });
    expect((await browser.get(PASSKEY_STEP)).headers.location).toBe(SIGNUP);
  });

  it('refuses a POST without the CSRF token', async () => {
    await setUp();
    expect((await browser.post(SIGNUP, { email: 'ada@example.com', username: 'ada' }, { csrf: false })).statusCode).toBe(403);
    expect(latchkey.mailer.outbox).toHaveLength(0);
    await signUpAndConfirm(browser);
    expect((await browser.post(PASSKEY_STEP, { credential: '{}' }, { csrf: false })).statusCode).toBe(403);
  });

  it('does not exist when MFA_PASSKEY_SIGNUP_ENABLED is off', async () => {
    await setUp({ ...PASSKEY_SIGNUP, MFA_PASSKEY_SIGNUP_ENABLED: false });
    expect((await browser.get('/accounts/signup/')).body).not.toContain(SIGNUP);
    expect((await browser.get(SIGNUP)).statusCode).toBe(404);
    expect((await browser.get(PASSKEY_STEP)).statusCode).toBe(404);
  });
});
