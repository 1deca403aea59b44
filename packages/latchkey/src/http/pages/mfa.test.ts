/**
 * The two-factor pages under /accounts/2fa/ as a person uses them: the overview, activating an
 * authenticator app (the secret and QR code, a wrong and a right code), the recovery codes (view,
 * download, regenerate), deactivation, the login's second step, reauthentication by code and
 * "trust this browser"; on every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { supportedAuthenticators } from '../../mfa/authenticators.js';
import { MFA_TRUST_COOKIE, trustToken } from '../../mfa/trust.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, totpCodeAt, type ActivatedTotp } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';
const AUTHENTICATE = '/accounts/2fa/authenticate/';
const ACTIVATE = '/accounts/2fa/totp/activate/';
const DEACTIVATE = '/accounts/2fa/totp/deactivate/';
const RECOVERY_CODES = '/accounts/2fa/recovery-codes/';
const DOWNLOAD = '/accounts/2fa/recovery-codes/download/';
const GENERATE = '/accounts/2fa/recovery-codes/generate/';
/** Past the five minutes within which a login counts as a recent proof of identity. */
const STALE_MS = 301 * 1000;

/** The key shown under "Can't scan?", as a person would copy it. */
function secretOnPage(body: string): string {
  const match = /id="mfa-totp-secret">([A-Z2-7]+)</.exec(body);
  if (!match) throw new Error(`No secret on the page: ${body}`);
  return match[1]!;
}

/** The codes listed on the recovery codes page, in order. */
function codesOnPage(body: string): string[] {
  const list = /<ul class="lk-codes" id="mfa-recovery-codes">([\s\S]*?)<\/ul>/.exec(body);
  return list ? [...list[1]!.matchAll(/<code>([^<]*)<\/code>/g)].map((match) => match[1]!) : [];
}

/** A six-digit code that is certainly not `code`. */
function otherThan(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(code.length, '0');
}

describe.each(testDatabaseKinds())('two-factor authentication pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}, options: { verified?: boolean } = {}) {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: options.verified ?? true });
  }

  /** Ada with an authenticator app and recovery codes, as if she had set them up earlier. */
  async function setUpWithTotp(settings: Partial<SettingValues> = {}): Promise<ActivatedTotp> {
    await setUp(settings);
    const totp = await activateTotpFor(latchkey, ada);
    latchkey.mailer.clear();
    return totp;
  }

  const login = (client: PageClient, password = PASSWORD, next?: string) =>
    client.post('/accounts/login/', { login: 'ada', password, ...(next === undefined ? {} : { next }) });
  const signedInUserId = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const authenticators = async () => (await latchkey.deps.store.authenticators.listForUser(ada.id)).map((authenticator) => authenticator.type).sort();
  const subjects = () => latchkey.mailer.outbox.map((mail) => mail.subject);
  /** Moves to the next time step, so the app shows a code not used yet. */
  const nextStep = () => latchkey.clock.advance(latchkey.settings.MFA_TOTP_PERIOD * 1000);

  /** Password and code: a full login of Ada in `client`. */
  async function loginWithCode(client: PageClient, code: string) {
    expect((await login(client)).headers.location).toBe(AUTHENTICATE);
    const done = await client.post(AUTHENTICATE, { code });
    expect(done.statusCode).toBe(302);
    expect(await signedInUserId(client)).toBe(ada.id);
  }

  describe('the overview, /accounts/2fa/', () => {
    it('sends a signed-out visitor to the login page, which returns here', async () => {
      await setUp();
      const response = await browser.get('/accounts/2fa/');
      expect(response.statusCode).toBe(302);
      expect(response.headers.location).toBe('/accounts/login/?next=%2Faccounts%2F2fa%2F');
    });

    it('shows the app as inactive, with a way to activate it, for a user without one', async () => {
      await setUp();
      await login(browser);
      const page = await browser.get('/accounts/2fa/');
      expect(page.statusCode).toBe(200);
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.body).toContain('<strong class="lk-status" id="mfa-totp-status">Inactive</strong>');
      expect(page.body).toContain(`href="${ACTIVATE}"`);
      expect(page.body).not.toContain('id="mfa-recovery-unused"');
    });

    it('shows the app as active and how many recovery codes are unused', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      const page = await browser.get('/accounts/2fa/');
      expect(page.body).toMatch(/id="mfa-totp-status">Active</);
      expect(page.body).toContain('<span id="mfa-recovery-unused">10 of 10</span>');
      expect(page.body).toContain(`href="${DEACTIVATE}"`);

      // A recovery code used at a later login is counted.
      await browser.post('/accounts/logout/', {});
      await loginWithCode(browser, totp.recoveryCodes[0]!);
      expect((await browser.get('/accounts/2fa/')).body).toContain('<span id="mfa-recovery-unused">9 of 10</span>');
    });
  });

  describe('activating an authenticator app', () => {
    it('without a verified address: a clear message, no form, and a POST is refused', async () => {
      await setUp({}, { verified: false });
      await login(browser);
      const page = await browser.get(ACTIVATE);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('You must verify your email address before you can turn on two-factor authentication.');
      expect(page.body).not.toContain('name="code"');
      expect(page.body).not.toContain('id="mfa-totp-secret"');
      expect(page.body).not.toContain('<svg');
      const refused = await browser.post(ACTIVATE, { code: '123456' });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('You must verify your email address');
      expect(await authenticators()).toEqual([]);
      expect(latchkey.mailer.outbox).toHaveLength(0);
    });

    it('without a recent login, GET and POST go through the reauthentication page first', async () => {
      await setUp();
      await login(browser);
      latchkey.clock.advance(STALE_MS);
      const expected = `/accounts/reauthenticate/?next=${encodeURIComponent(ACTIVATE)}`;
      const page = await browser.get(ACTIVATE);
      expect(page.statusCode).toBe(302);
      expect(page.headers.location).toBe(expected);
      const posted = await browser.post(ACTIVATE, { code: '123456' });
      expect(posted.statusCode).toBe(302);
      expect(posted.headers.location).toBe(expected);

      // Once the password is given again, the page is there.
      const confirmed = await browser.post('/accounts/reauthenticate/', { password: PASSWORD, next: ACTIVATE });
      expect(confirmed.headers.location).toBe(ACTIVATE);
      const shown = await browser.get(ACTIVATE);
      // The location says where a refusal would send the person (login, reauthentication, the MFA index).
      expect({ status: shown.statusCode, location: shown.headers.location }).toEqual({ status: 200, location: undefined });
    });

    it('shows the secret and an inline QR code; a wrong code shows the same secret again', async () => {
      await setUp();
      await login(browser);
      const page = await browser.get(ACTIVATE);
      expect(page.statusCode).toBe(200);
      expect(page.headers['cache-control']).toBe('no-store');
      const secret = secretOnPage(page.body);
      expect(secret.length).toBeGreaterThanOrEqual(32);
      expect(page.body).toMatch(/<div class="lk-qr" id="mfa-totp-qr">\s*(<\?xml[^>]*>\s*)?<svg[\s\S]*<\/svg>\s*<\/div>/);
      expect(page.body).toContain('otpauth://totp/');
      for (const name of ['csrfmiddlewaretoken', 'code']) expect(page.body).toContain(`name="${name}"`);
      // Reloading the page does not change the QR code under the person's eyes.
      expect(secretOnPage((await browser.get(ACTIVATE)).body)).toBe(secret);

      const wrong = await browser.post(ACTIVATE, { code: otherThan(totpCodeAt(latchkey.deps, secret, latchkey.clock.now())) });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.body).toContain('Incorrect code.');
      expect(secretOnPage(wrong.body)).toBe(secret);
      expect(await authenticators()).toEqual([]);
      expect(latchkey.mailer.outbox).toHaveLength(0);
    });

    it('the right code activates the app, rotates the session, mails a notice and shows the recovery codes', async () => {
      await setUp();
      await login(browser);
      const secret = secretOnPage((await browser.get(ACTIVATE)).body);
      const sessionBefore = browser.cookies.get('sessionid');
      const done = await browser.post(ACTIVATE, { code: totpCodeAt(latchkey.deps, secret, latchkey.clock.now()) });
      expect(done.statusCode).toBe(302);
      expect(done.headers.location).toBe(RECOVERY_CODES);
      expect(browser.cookies.get('sessionid')).not.toBe(sessionBefore);
      expect(await latchkey.deps.sessions.load(sessionBefore)).toBeUndefined();
      expect(await signedInUserId(browser)).toBe(ada.id);
      expect(await authenticators()).toEqual(['recovery_codes', 'totp']);
      expect(subjects()).toEqual(['[Test Site] Two-factor authentication was turned on for your account']);
      expect(latchkey.mailer.outbox[0]!.to).toEqual(['ada@example.com']);

      const codes = await browser.get(RECOVERY_CODES);
      expect(codes.statusCode).toBe(200);
      expect(codes.body).toContain('Authenticator app activated.');
      expect(codesOnPage(codes.body)).toHaveLength(10);

      // The app is asked for at the next login, and the code the person typed now is no longer good.
      await browser.post('/accounts/logout/', {});
      expect((await login(browser)).headers.location).toBe(AUTHENTICATE);
      nextStep();
      expect((await browser.post(AUTHENTICATE, { code: totpCodeAt(latchkey.deps, secret, latchkey.clock.now()) })).statusCode).toBe(302);
    });

    it('a user whose app is already active is sent back to the overview', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      const response = await browser.get(ACTIVATE);
      expect(response.headers.location).toBe('/accounts/2fa/');
      expect((await browser.get('/accounts/2fa/')).body).toContain('You already have an authenticator app set up.');
    });
  });

  describe('recovery codes', () => {
    it('lists 10 codes of 8 digits, the ones a login can use', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      const page = await browser.get(RECOVERY_CODES);
      expect(page.statusCode).toBe(200);
      expect(page.headers['cache-control']).toBe('no-store');
      const codes = codesOnPage(page.body);
      expect(codes).toHaveLength(10);
      for (const code of codes) expect(code).toMatch(/^\d{8}$/);
      expect(new Set(codes).size).toBe(10);
      expect(codes).toEqual(totp.recoveryCodes);
      expect(page.body).toContain('10 of 10 unused');
    });

    it('download: a text/plain attachment with the same codes, never cached', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      const listed = codesOnPage((await browser.get(RECOVERY_CODES)).body);
      const file = await browser.get(DOWNLOAD);
      expect(file.statusCode).toBe(200);
      expect(file.headers['content-type']).toMatch(/^text\/plain/);
      expect(file.headers['content-disposition']).toMatch(/^attachment;/);
      expect(file.headers['cache-control']).toBe('no-store');
      expect(file.body.trim().split('\n')).toEqual(listed);
    });

    it('generate: a new set replaces the old one, which stops working; the owner is told', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      const form = await browser.get(GENERATE);
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain('every one of your current codes, used or not, stops working');
      expect(form.body).toContain(`action="${GENERATE}"`);
      const done = await browser.post(GENERATE, {});
      expect(done.statusCode).toBe(302);
      expect(done.headers.location).toBe(RECOVERY_CODES);
      expect(subjects()).toEqual(['[Test Site] New recovery codes were generated for your account']);

      const fresh = codesOnPage((await browser.get(RECOVERY_CODES)).body);
      expect(fresh).toHaveLength(10);
      for (const old of totp.recoveryCodes) expect(fresh).not.toContain(old);
      expect((await browser.get(DOWNLOAD)).body.trim().split('\n')).toEqual(fresh);

      const elsewhere = browser.another();
      await login(elsewhere);
      const refused = await elsewhere.post(AUTHENTICATE, { code: totp.recoveryCodes[0]! });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('Incorrect code.');
      expect((await elsewhere.post(AUTHENTICATE, { code: fresh[0]! })).statusCode).toBe(302);
      expect(await signedInUserId(elsewhere)).toBe(ada.id);
    });
  });

  describe('deactivating the app', () => {
    it('asks first, then removes the app and the recovery codes, mails a notice, and logins need no code', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      const form = await browser.get(DEACTIVATE);
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain(`action="${DEACTIVATE}"`);
      expect(form.body).toContain('Your recovery codes will be deleted as well');
      expect(await authenticators()).toEqual(['recovery_codes', 'totp']);

      const done = await browser.post(DEACTIVATE, {});
      expect(done.statusCode).toBe(302);
      expect(done.headers.location).toBe('/accounts/2fa/');
      expect(await authenticators()).toEqual([]);
      expect(subjects()).toEqual(['[Test Site] Two-factor authentication was turned off for your account']);
      const overview = await browser.get('/accounts/2fa/');
      expect(overview.body).toContain('Authenticator app deactivated.');
      expect(overview.body).toMatch(/id="mfa-totp-status">Inactive</);

      const elsewhere = browser.another();
      const signedIn = await login(elsewhere);
      expect(signedIn.headers.location).toBe('/');
      expect(await signedInUserId(elsewhere)).toBe(ada.id);
    });
  });

  describe('the login of a user with an authenticator app', () => {
    it('stops after the password at the code page, and the right code signs in and goes to next', async () => {
      const totp = await setUpWithTotp();
      const afterPassword = await login(browser, PASSWORD, '/accounts/email/');
      expect(afterPassword.statusCode).toBe(302);
      expect(afterPassword.headers.location).toBe(AUTHENTICATE);
      expect(await signedInUserId(browser)).toBeNull();

      const page = await browser.get(AUTHENTICATE);
      expect(page.statusCode).toBe(200);
      expect(page.headers['cache-control']).toBe('no-store');
      for (const name of ['csrfmiddlewaretoken', 'code']) expect(page.body).toContain(`name="${name}"`);
      expect(page.body).toContain(`action="${AUTHENTICATE}"`);
      expect(page.body).toContain('action="/accounts/logout/"');

      const done = await browser.post(AUTHENTICATE, { code: totp.code() });
      expect(done.statusCode).toBe(302);
      expect(done.headers.location).toBe('/accounts/email/');
      expect(await signedInUserId(browser)).toBe(ada.id);
      expect((await browser.get('/accounts/email/')).statusCode).toBe(200);
      const logins = (await latchkey.deps.store.auditLog.listForUser(ada.id)).filter((record) => record.event === 'user_logged_in');
      expect(logins.map((record) => record.data.method)).toEqual(['password+totp']);
    });

    it('without next, the code leads home', async () => {
      const totp = await setUpWithTotp();
      await login(browser);
      const done = await browser.post(AUTHENTICATE, { code: totp.code() });
      expect(done.headers.location).toBe('/');
    });

    it('without next, the code leads to LOGIN_REDIRECT_URL when the project sets it', async () => {
      const totp = await setUpWithTotp({ LOGIN_REDIRECT_URL: '/users/~redirect/' });
      expect((await login(browser)).headers.location).toBe(AUTHENTICATE);
      const done = await browser.post(AUTHENTICATE, { code: totp.code() });
      expect(done.statusCode).toBe(302);
      expect(done.headers.location).toBe('/users/~redirect/');
      expect(await signedInUserId(browser)).toBe(ada.id);
    });

    it('a wrong code is refused on the same page, and the login can still finish', async () => {
      const totp = await setUpWithTotp();
      await login(browser);
      const wrong = await browser.post(AUTHENTICATE, { code: otherThan(totp.code()) });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.body).toContain('Incorrect code.');
      expect(wrong.body).toContain('name="code"');
      expect(await signedInUserId(browser)).toBeNull();
      expect((await browser.post(AUTHENTICATE, { code: totp.code() })).statusCode).toBe(302);
      expect(await signedInUserId(browser)).toBe(ada.id);
    });

    it('a recovery code signs in once', async () => {
      const totp = await setUpWithTotp();
      const code = totp.recoveryCodes[3]!;
      await login(browser);
      expect((await browser.post(AUTHENTICATE, { code })).statusCode).toBe(302);
      expect(await signedInUserId(browser)).toBe(ada.id);

      const again = browser.another();
      await login(again);
      const refused = await again.post(AUTHENTICATE, { code });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('Incorrect code.');
      expect(await signedInUserId(again)).toBeNull();
    });

    it('the code page without a pending login sends the visitor to the login page', async () => {
      const totp = await setUpWithTotp();
      expect((await browser.get(AUTHENTICATE)).headers.location).toBe('/accounts/login/');
      const posted = await browser.post(AUTHENTICATE, { code: totp.code() });
      expect(posted.statusCode).toBe(302);
      expect(posted.headers.location).toBe('/accounts/login/');
      expect(await signedInUserId(browser)).toBeNull();
    });

    it('the pending login expires after ACCOUNT_LOGIN_TIMEOUT', async () => {
      const totp = await setUpWithTotp();
      await login(browser);
      latchkey.clock.advance(latchkey.settings.ACCOUNT_LOGIN_TIMEOUT * 1000 - 1000);
      expect((await browser.get(AUTHENTICATE)).statusCode).toBe(200);
      latchkey.clock.advance(2000);
      expect((await browser.get(AUTHENTICATE)).headers.location).toBe('/accounts/login/');
      const late = await browser.post(AUTHENTICATE, { code: totp.code() });
      expect(late.headers.location).toBe('/accounts/login/');
      expect(await signedInUserId(browser)).toBeNull();
    });

    it('"Cancel" ends the pending login', async () => {
      const totp = await setUpWithTotp();
      await login(browser);
      const cancelled = await browser.post('/accounts/logout/', {});
      expect(cancelled.statusCode).toBe(302);
      expect((await browser.get(AUTHENTICATE)).headers.location).toBe('/accounts/login/');
      expect((await browser.post(AUTHENTICATE, { code: totp.code() })).headers.location).toBe('/accounts/login/');
      expect(await signedInUserId(browser)).toBeNull();
      expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
    });
  });

  describe('reauthentication by code', () => {
    it('the password page offers the code instead to a user with an app, and the code confirms', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      latchkey.clock.advance(STALE_MS);

      const stale = await browser.get(DEACTIVATE);
      expect(stale.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(DEACTIVATE)}`);
      const passwordPage = await browser.get(stale.headers.location as string);
      const codeUrl = `/accounts/2fa/reauthenticate/?next=${encodeURIComponent(DEACTIVATE)}`;
      expect(passwordPage.body).toContain(`href="${codeUrl}"`);

      const form = await browser.get(codeUrl);
      expect(form.statusCode).toBe(200);
      for (const name of ['csrfmiddlewaretoken', 'code']) expect(form.body).toContain(`name="${name}"`);
      expect(form.body).toContain(`name="next" value="${DEACTIVATE}"`);

      const wrong = await browser.post('/accounts/2fa/reauthenticate/', { code: otherThan(totp.code()), next: DEACTIVATE });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.body).toContain('Incorrect code.');
      expect((await browser.get(DEACTIVATE)).statusCode).toBe(302);

      const confirmed = await browser.post('/accounts/2fa/reauthenticate/', { code: totp.code(), next: DEACTIVATE });
      expect(confirmed.statusCode).toBe(302);
      expect(confirmed.headers.location).toBe(DEACTIVATE);
      expect((await browser.get(DEACTIVATE)).statusCode).toBe(200);
      expect((await browser.post(DEACTIVATE, {})).headers.location).toBe('/accounts/2fa/');
      expect(await authenticators()).toEqual([]);
    });

    it('a recovery code confirms as well', async () => {
      const totp = await setUpWithTotp();
      await loginWithCode(browser, totp.code());
      latchkey.clock.advance(STALE_MS);
      const confirmed = await browser.post('/accounts/2fa/reauthenticate/', { code: totp.recoveryCodes[0]!, next: RECOVERY_CODES });
      expect(confirmed.headers.location).toBe(RECOVERY_CODES);
      const codes = codesOnPage((await browser.get(RECOVERY_CODES)).body);
      expect(codes).toHaveLength(9);
      expect(codes).not.toContain(totp.recoveryCodes[0]);
    });

    it('a user without an app gets no link, and the code page sends them to the password', async () => {
      await setUp();
      await login(browser);
      latchkey.clock.advance(STALE_MS);
      const passwordPage = await browser.get(`/accounts/reauthenticate/?next=${encodeURIComponent(ACTIVATE)}`);
      expect(passwordPage.statusCode).toBe(200);
      expect(passwordPage.body).not.toContain('/accounts/2fa/reauthenticate/');
      const codePage = await browser.get(`/accounts/2fa/reauthenticate/?next=${encodeURIComponent(ACTIVATE)}`);
      expect(codePage.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(ACTIVATE)}`);
    });
  });

  describe('trust this browser', () => {
    const trustCookieOf = (response: { cookies: { name: string }[] }) => response.cookies.find((cookie) => cookie.name === MFA_TRUST_COOKIE);

    it('with MFA_TRUST_ENABLED: the ticked box sets a 14-day cookie; that browser alone skips the code, until the password changes', async () => {
      const totp = await setUpWithTotp({ MFA_TRUST_ENABLED: true });
      await login(browser);
      const page = await browser.get(AUTHENTICATE);
      expect(page.body).toContain('name="trust"');
      expect(page.body).toContain('Trust this browser for 14 days');

      const done = await browser.post(AUTHENTICATE, { code: totp.code(), trust: 'on' });
      expect(done.statusCode).toBe(302);
      expect(trustCookieOf(done)).toMatchObject({ httpOnly: true, sameSite: 'Lax', maxAge: 14 * 86400, path: '/' });

      // The next login from this browser needs only the password.
      await browser.post('/accounts/logout/', {});
      latchkey.clock.advance(86400 * 1000);
      const trusted = await login(browser, PASSWORD, '/accounts/email/');
      expect(trusted.headers.location).toBe('/accounts/email/');
      expect(await signedInUserId(browser)).toBe(ada.id);
      const newestLogin = (await latchkey.deps.store.auditLog.listForUser(ada.id)).find((record) => record.event === 'user_logged_in');
      expect(newestLogin?.data.method).toBe('password+trusted_browser');

      // Another browser still needs the code.
      const other = browser.another();
      expect((await login(other)).headers.location).toBe(AUTHENTICATE);
      expect(await signedInUserId(other)).toBeNull();

      // After a password change, the trusted browser needs it again.
      const changed = await browser.post('/accounts/password/change/', { oldpassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD });
      expect(changed.headers.location).toBe('/accounts/password/change/');
      await browser.post('/accounts/logout/', {});
      expect(browser.cookies.has(MFA_TRUST_COOKIE)).toBe(true);
      const afterChange = await login(browser, NEW_PASSWORD);
      expect(afterChange.headers.location).toBe(AUTHENTICATE);
      expect(await signedInUserId(browser)).toBeNull();
    });

    it('with MFA_TRUST_ENABLED, an unticked box sets no cookie and a forged cookie does nothing', async () => {
      const totp = await setUpWithTotp({ MFA_TRUST_ENABLED: true });
      await login(browser);
      const done = await browser.post(AUTHENTICATE, { code: totp.code() });
      expect(done.statusCode).toBe(302);
      expect(trustCookieOf(done)).toBeUndefined();
      await browser.post('/accounts/logout/', {});
      expect((await login(browser)).headers.location).toBe(AUTHENTICATE);

      const forger = browser.another();
      forger.cookies.set(MFA_TRUST_COOKIE, 'eyJ1IjoxLCJmIjoieCJ9:forged:signature');
      expect((await login(forger)).headers.location).toBe(AUTHENTICATE);
      expect(await signedInUserId(forger)).toBeNull();
    });

    it('without MFA_TRUST_ENABLED: no box, no cookie, and an old valid cookie does nothing', async () => {
      const totp = await setUpWithTotp();
      await login(browser);
      const page = await browser.get(AUTHENTICATE);
      expect(page.body).not.toContain('name="trust"');
      expect(page.body).not.toContain('Trust this browser');
      const done = await browser.post(AUTHENTICATE, { code: totp.code(), trust: 'on' });
      expect(done.statusCode).toBe(302);
      expect(trustCookieOf(done)).toBeUndefined();

      // A cookie issued while the setting was on (same key, same account) is ignored once it is off.
      const old = browser.another();
      old.cookies.set(MFA_TRUST_COOKIE, trustToken(latchkey.deps, ada, await supportedAuthenticators(latchkey.deps, ada.id)));
      const response = await login(old);
      expect(response.headers.location).toBe(AUTHENTICATE);
      expect(await signedInUserId(old)).toBeNull();
      const forged = browser.another();
      forged.cookies.set(MFA_TRUST_COOKIE, 'forged');
      expect((await login(forged)).headers.location).toBe(AUTHENTICATE);
    });
  });

  it('signup under optional verification still signs straight in (through the login stages)', async () => {
    await setUp();
    const response = await browser.post('/accounts/signup/', {
      email: 'grace@example.com',
      username: 'grace',
      password1: PASSWORD,
      password2: PASSWORD,
      next: '/accounts/email/',
    });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/accounts/email/');
    const grace = await latchkey.deps.store.users.findByUsername('grace');
    expect(grace).toBeDefined();
    expect(await signedInUserId(browser)).toBe(grace!.id);
    const page = await browser.get('/accounts/email/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Successfully signed in as grace.');
    expect(page.body).toContain('We have sent an email to grace@example.com for verification.');
  });
});
