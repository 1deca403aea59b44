/**
 * Attacks on the second factor, through the pages: reaching anything after the password step
 * alone, TOTP replay, drift and lockout, recovery code reuse, regeneration and viewing, turning
 * TOTP off or on without the right proofs, the MFA side of a planted session and of a logout
 * mid-MFA, CSRF on every 2fa form, and a password reset of an account with MFA; on every database.
 *
 * The check that nothing is reachable after the password step alone covers the HTML pages here;
 * the headless API (http/headless/headless.security.test.ts) and the token API
 * (http/api/api.test.ts, tokens/flows/obtain-token.test.ts) check their own doors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { unusedRecoveryCodes } from '../../mfa/authenticators.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, totpCodeAt, type ActivatedTotp } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';
const AUTHENTICATE = '/accounts/2fa/authenticate/';
const REAUTHENTICATE_BY_CODE = '/accounts/2fa/reauthenticate/';
const ACTIVATE = '/accounts/2fa/totp/activate/';
const DEACTIVATE = '/accounts/2fa/totp/deactivate/';
const RECOVERY_CODES = '/accounts/2fa/recovery-codes/';
const DOWNLOAD = '/accounts/2fa/recovery-codes/download/';
const GENERATE = '/accounts/2fa/recovery-codes/generate/';
const INCORRECT_CODE = 'Incorrect code.';
const TOO_MANY = 'Too many failed login attempts';
/** Past the five minutes within which a login counts as a recent proof of identity. */
const STALE_MS = 301 * 1000;
/** High enough that every one of ten parallel attempts reaches the code check, so the race is real. */
const ROOMY_LIMITS: Partial<SettingValues> = { ACCOUNT_RATE_LIMITS: { login_failed: '100/m/ip,100/5m/key,100/d/key' } };

/** A six-digit code that is certainly not `code`. */
function otherThan(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(code.length, '0');
}

/** The codes listed on the recovery codes page. */
function codesOnPage(body: string): string[] {
  const list = /<ul class="lk-codes" id="mfa-recovery-codes">([\s\S]*?)<\/ul>/.exec(body);
  return list ? [...list[1]!.matchAll(/<code>([^<]*)<\/code>/g)].map((match) => match[1]!) : [];
}

/** The form-wide error messages on a page. */
function formErrors(body: string): string[] {
  const list = /<ul class="lk-errors" id="__all__-errors">([\s\S]*?)<\/ul>/.exec(body);
  return list ? [...list[1]!.matchAll(/<li>([^<]*)<\/li>/g)].map((match) => match[1]!) : [];
}

/** The path of the reset link in the latest mail, as a person would click it. */
function resetLinkPath(latchkey: TestLatchkey): string {
  const text = latchkey.mailer.outbox.at(-1)?.text ?? '';
  const link = /http:\/\/testserver(\/accounts\/password\/reset\/key\/[^\s/]+\/)/.exec(text);
  if (!link) throw new Error(`No reset link in: ${text}`);
  return link[1]!;
}

describe.each(testDatabaseKinds())('two-factor authentication under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  /** Ada, with a verified address, an authenticator app and recovery codes. */
  async function setUp(settings: Partial<SettingValues> = {}) {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
    latchkey.mailer.clear();
  }

  const login = (client: PageClient, password = PASSWORD) => client.post('/accounts/login/', { login: 'ada', password });
  /** A browser that has passed the password step and stands at the code page. */
  async function pendingBrowser(client: PageClient = browser.another()): Promise<PageClient> {
    const response = await login(client);
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(AUTHENTICATE);
    return client;
  }
  async function signedIn(client: PageClient = browser, code = totp.code()): Promise<PageClient> {
    await pendingBrowser(client);
    expect((await client.post(AUTHENTICATE, { code })).statusCode).toBe(302);
    return client;
  }
  const userSessions = () => latchkey.deps.store.sessions.listForUser(ada.id);
  const signedInUserId = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const nextStep = () => latchkey.clock.advance(latchkey.settings.MFA_TOTP_PERIOD * 1000);

  /** What an attacker would want to change: the password, the second factors, the addresses. */
  async function accountState() {
    const user = (await latchkey.deps.store.users.findById(ada.id))!;
    const authenticators = await latchkey.deps.store.authenticators.listForUser(ada.id);
    const codes = authenticators.find((authenticator) => authenticator.type === 'recovery_codes');
    return {
      password: user.password,
      authenticators: authenticators.map(({ id, type, data }) => ({ id, type, data })),
      unusedRecoveryCodes: codes ? await unusedRecoveryCodes(latchkey.deps, codes) : [],
      addresses: (await latchkey.deps.store.emailAddresses.listForUser(ada.id)).map(({ email, verified, primary }) => ({ email, verified, primary })),
      mails: latchkey.mailer.outbox.length,
    };
  }

  it('after the password step alone, every protected page answers as to a stranger, and no session of the user exists', async () => {
    await setUp();
    const pending = await pendingBrowser(browser);
    const before = await accountState();
    const code = totp.code();
    const gets = ['/accounts/email/', '/accounts/password/change/', '/accounts/sessions/', '/accounts/2fa/', ACTIVATE, DEACTIVATE, RECOVERY_CODES, DOWNLOAD, GENERATE, '/accounts/reauthenticate/', REAUTHENTICATE_BY_CODE];
    const posts: [string, Record<string, string>][] = [
      ['/accounts/email/', { email: 'mallory@example.com', action_add: '' }],
      ['/accounts/password/change/', { oldpassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD }],
      ['/accounts/sessions/', {}],
      [ACTIVATE, { code }],
      [DEACTIVATE, {}],
      [GENERATE, {}],
      ['/accounts/reauthenticate/', { password: PASSWORD }],
      [REAUTHENTICATE_BY_CODE, { code }],
    ];
    const responses = [];
    for (const path of gets) responses.push([`GET ${path}`, path, await pending.get(path)] as const);
    for (const [path, fields] of posts) responses.push([`POST ${path}`, path, await pending.post(path, fields)] as const);
    for (const [what, path, response] of responses) {
      expect(response.statusCode, what).toBe(302);
      expect(response.headers.location, what).toBe(`/accounts/login/?next=${encodeURIComponent(path)}`);
      expect(response.body, what).not.toContain('ada@example.com');
      expect(response.body, what).not.toMatch(/\d{8}/);
    }
    expect(await accountState()).toEqual(before);
    expect(await userSessions()).toEqual([]);
    expect(await signedInUserId(pending)).toBeNull();

    // The login itself is untouched: the code was not used up by any of the above.
    expect((await pending.post(AUTHENTICATE, { code })).statusCode).toBe(302);
    expect(await signedInUserId(pending)).toBe(ada.id);
  });

  describe('TOTP codes cannot be replayed, raced, used out of their window or guessed past the lockout', () => {
    it('a code is good once: replayed later from another login it is refused', async () => {
      await setUp();
      const code = totp.code();
      const first = await pendingBrowser();
      expect((await first.post(AUTHENTICATE, { code })).statusCode).toBe(302);
      expect(await signedInUserId(first)).toBe(ada.id);

      const replay = await pendingBrowser();
      const refused = await replay.post(AUTHENTICATE, { code });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain(INCORRECT_CODE);
      expect(await signedInUserId(replay)).toBeNull();
      expect(await userSessions()).toHaveLength(1);
    });

    it('the same code from 10 pending logins at once: exactly one signs in', async () => {
      await setUp(ROOMY_LIMITS);
      const browsers = [];
      for (let i = 0; i < 10; i++) browsers.push(await pendingBrowser());
      const code = totp.code();
      const responses = await Promise.all(browsers.map((client) => client.post(AUTHENTICATE, { code })));
      expect(responses.filter((response) => response.statusCode === 302)).toHaveLength(1);
      const refused = responses.filter((response) => response.statusCode === 400);
      expect(refused).toHaveLength(9);
      for (const response of refused) expect(response.body).toContain(INCORRECT_CODE);
      expect(await userSessions()).toHaveLength(1);
    });

    it('codes of 60 s before and after now are refused; the current one is accepted', async () => {
      await setUp();
      const client = await pendingBrowser();
      const now = latchkey.clock.now().getTime();
      for (const offset of [-60_000, 60_000]) {
        const drifted = totpCodeAt(latchkey.deps, totp.secret, new Date(now + offset));
        const refused = await client.post(AUTHENTICATE, { code: drifted });
        expect(refused.statusCode, `${offset / 1000} s`).toBe(400);
        expect(refused.body).toContain(INCORRECT_CODE);
      }
      expect(await signedInUserId(client)).toBeNull();
      expect((await client.post(AUTHENTICATE, { code: totp.code() })).statusCode).toBe(302);
      expect(await signedInUserId(client)).toBe(ada.id);
    });

    it('wrong codes count toward the login lockout: then the right code and the password are refused with the generic message', async () => {
      await setUp();
      const client = await pendingBrowser();
      for (let i = 0; i < 5; i++) {
        const wrong = await client.post(AUTHENTICATE, { code: otherThan(totp.code()) });
        expect(wrong.statusCode, `wrong code ${i + 1}`).toBe(400);
        expect(wrong.body).toContain(INCORRECT_CODE);
      }
      const locked = await client.post(AUTHENTICATE, { code: totp.code() });
      expect(locked.statusCode).toBe(429);
      expect(formErrors(locked.body)).toEqual([expect.stringContaining(TOO_MANY)]);
      expect(await signedInUserId(client)).toBeNull();

      // The password step is locked for the account too, from any browser, with the same message.
      const password = await login(browser.another());
      expect(password.statusCode).toBe(429);
      expect(formErrors(password.body)).toEqual(formErrors(locked.body));
      expect(await userSessions()).toEqual([]);

      // Once the window has passed, the person gets in.
      latchkey.clock.advance(5 * 60 * 1000 + 1000);
      await signedIn(browser.another());
    });
  });

  describe('recovery codes cannot be reused, raced, outlive a regeneration or be seen without a recent proof', () => {
    it('a recovery code is good once', async () => {
      await setUp();
      const code = totp.recoveryCodes[0]!;
      const first = await pendingBrowser();
      expect((await first.post(AUTHENTICATE, { code })).statusCode).toBe(302);
      const replay = await pendingBrowser();
      const refused = await replay.post(AUTHENTICATE, { code });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain(INCORRECT_CODE);
      expect(await signedInUserId(replay)).toBeNull();
      expect(await userSessions()).toHaveLength(1);
    });

    it('the same recovery code from 10 pending logins at once: exactly one signs in, and it is used up', async () => {
      await setUp(ROOMY_LIMITS);
      const browsers = [];
      for (let i = 0; i < 10; i++) browsers.push(await pendingBrowser());
      const code = totp.recoveryCodes[5]!;
      const responses = await Promise.all(browsers.map((client) => client.post(AUTHENTICATE, { code })));
      expect(responses.filter((response) => response.statusCode === 302)).toHaveLength(1);
      expect(responses.filter((response) => response.statusCode === 400)).toHaveLength(9);
      expect(await userSessions()).toHaveLength(1);
      expect((await accountState()).unusedRecoveryCodes).toEqual(totp.recoveryCodes.filter((unused) => unused !== code));
    });

    it('after regeneration the old codes fail and the new ones work', async () => {
      await setUp();
      await signedIn();
      expect((await browser.post(GENERATE, {})).headers.location).toBe(RECOVERY_CODES);
      const fresh = codesOnPage((await browser.get(RECOVERY_CODES)).body);
      expect(fresh).toHaveLength(10);
      for (const old of totp.recoveryCodes.slice(0, 3)) {
        const client = await pendingBrowser();
        const refused = await client.post(AUTHENTICATE, { code: old });
        expect(refused.statusCode).toBe(400);
        expect(refused.body).toContain(INCORRECT_CODE);
        expect(await signedInUserId(client)).toBeNull();
      }
      const client = await pendingBrowser();
      expect((await client.post(AUTHENTICATE, { code: fresh[0]! })).statusCode).toBe(302);
    });

    it('viewing, downloading or regenerating the codes without a recent reauthentication is sent to reauthenticate', async () => {
      await setUp();
      await signedIn();
      latchkey.clock.advance(STALE_MS);
      const before = await accountState();
      for (const path of [RECOVERY_CODES, DOWNLOAD, GENERATE]) {
        const response = await browser.get(path);
        expect(response.statusCode, path).toBe(302);
        expect(response.headers.location, path).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(path)}`);
        for (const code of totp.recoveryCodes) expect(response.body, path).not.toContain(code);
      }
      const posted = await browser.post(GENERATE, {});
      expect(posted.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(GENERATE)}`);
      expect(await accountState()).toEqual(before);
    });
  });

  describe('turning TOTP off and on needs a recent reauthentication and a verified address', () => {
    it('deactivating without a recent reauthentication is sent to reauthenticate, and TOTP stays active', async () => {
      await setUp();
      await signedIn();
      latchkey.clock.advance(STALE_MS);
      const before = await accountState();
      const expected = `/accounts/reauthenticate/?next=${encodeURIComponent(DEACTIVATE)}`;
      const page = await browser.get(DEACTIVATE);
      expect(page.statusCode).toBe(302);
      expect(page.headers.location).toBe(expected);
      const posted = await browser.post(DEACTIVATE, {});
      expect(posted.statusCode).toBe(302);
      expect(posted.headers.location).toBe(expected);
      expect(await accountState()).toEqual(before);
      expect((await latchkey.deps.store.authenticators.findForUser(ada.id, 'totp'))).toBeDefined();
      expect(latchkey.mailer.outbox).toHaveLength(0);
    });

    it('activating with an unverified address is refused and creates nothing', async () => {
      await setUp();
      const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: false });
      const client = browser.another();
      expect((await client.post('/accounts/login/', { login: 'grace', password: PASSWORD })).headers.location).toBe('/');
      const page = await client.get(ACTIVATE);
      expect(page.body).not.toContain('name="code"');
      for (const code of ['123456', '000000', '']) {
        const refused = await client.post(ACTIVATE, { code });
        expect(refused.statusCode).toBe(400);
        expect(refused.body).toContain('You must verify your email address');
      }
      expect(await latchkey.deps.store.authenticators.listForUser(grace.id)).toEqual([]);
      expect(latchkey.mailer.outbox.filter((mail) => mail.subject.includes('Two-factor'))).toEqual([]);
    });

    it('a setup begun while verified cannot be finished once no address is verified', async () => {
      await setUp();
      const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      const client = browser.another();
      await client.post('/accounts/login/', { login: 'grace', password: PASSWORD });
      const secret = /id="mfa-totp-secret">([A-Z2-7]+)</.exec((await client.get(ACTIVATE)).body)![1]!;
      const verified = (await latchkey.deps.store.emailAddresses.listForUser(grace.id))[0]!;
      const unverified = await latchkey.deps.store.emailAddresses.add({ userId: grace.id, email: 'grace2@example.com', verified: false, primary: false });
      await latchkey.deps.store.emailAddresses.setPrimary(grace.id, unverified.id);
      await latchkey.deps.store.emailAddresses.remove(verified.id);
      const refused = await client.post(ACTIVATE, { code: totpCodeAt(latchkey.deps, secret, latchkey.clock.now()) });
      expect(refused.statusCode).toBe(400);
      expect(await latchkey.deps.store.authenticators.listForUser(grace.id)).toEqual([]);
    });
  });

  it('a session id planted before login cannot finish the pending login', async () => {
    await setUp();
    // The attacker plants an anonymous session of their own in the victim's browser...
    await browser.get('/accounts/login/');
    const planted = (await latchkey.deps.sessions.create({ userId: null })).id;
    browser.cookies.set('sessionid', planted);
    // ...the victim passes the password step there...
    await pendingBrowser(browser);
    // ...and the attacker, holding the planted id and a stolen recovery code but not the password, must get nowhere.
    const attacker = browser.another();
    attacker.cookies.set('sessionid', planted);
    await attacker.get('/accounts/login/');
    const finished = await attacker.post(AUTHENTICATE, { code: totp.recoveryCodes[0]! });
    expect(await signedInUserId(attacker), 'the attacker is signed in as the victim').toBeNull();
    expect(finished.headers.location).toBe('/accounts/login/');
    expect((await attacker.get(AUTHENTICATE)).headers.location).toBe('/accounts/login/');
    expect(await userSessions()).toEqual([]);
    // The pending login went on under a new id, which the victim's browser holds.
    expect(browser.cookies.get('sessionid')).not.toBe(planted);
    expect((await browser.post(AUTHENTICATE, { code: totp.code() })).statusCode).toBe(302);
    expect(await signedInUserId(browser)).toBe(ada.id);
  });

  it('logging out mid-MFA clears the pending login, and its cookie replayed does nothing', async () => {
    await setUp();
    const pending = await pendingBrowser();
    const cookie = pending.cookies.get('sessionid')!;
    const code = totp.code();
    expect((await pending.post('/accounts/logout/', {})).statusCode).toBe(302);
    expect(await latchkey.deps.sessions.load(cookie)).toBeUndefined();
    expect((await pending.get(AUTHENTICATE)).headers.location).toBe('/accounts/login/');
    const after = await pending.post(AUTHENTICATE, { code });
    expect(after.statusCode).toBe(302);
    expect(after.headers.location).toBe('/accounts/login/');
    expect(await signedInUserId(pending)).toBeNull();

    const replay = browser.another();
    replay.cookies.set('sessionid', cookie);
    expect((await replay.get(AUTHENTICATE)).headers.location).toBe('/accounts/login/');
    const replayed = await replay.post(AUTHENTICATE, { code });
    expect(replayed.headers.location).toBe('/accounts/login/');
    expect(await signedInUserId(replay)).toBeNull();
    expect(await userSessions()).toEqual([]);
  });

  it("every 2fa form refuses a POST without a CSRF token or with another browser's, and changes nothing", async () => {
    await setUp();
    const stranger = browser.another();
    await stranger.get('/accounts/login/');
    const foreignToken = stranger.cookies.get('csrftoken')!;
    /** Both forged posts, which must each be refused with 403. */
    async function forged(client: PageClient, path: string, fields: Record<string, string>) {
      const withoutToken = await client.post(path, fields, { csrf: false });
      const withForeignToken = await client.post(path, { ...fields, csrfmiddlewaretoken: foreignToken }, { csrf: false });
      for (const response of [withoutToken, withForeignToken]) expect(response.statusCode, path).toBe(403);
    }

    // The login's second step: no sign-in, and the code is still good afterwards.
    const pending = await pendingBrowser();
    const code = totp.code();
    await forged(pending, AUTHENTICATE, { code });
    // Its "Cancel" button cannot be pressed from another site either.
    await forged(pending, '/accounts/logout/', {});
    expect((await pending.get(AUTHENTICATE)).statusCode).toBe(200);
    expect(await signedInUserId(pending)).toBeNull();
    expect(await userSessions()).toEqual([]);
    expect((await pending.post(AUTHENTICATE, { code })).statusCode).toBe(302);

    // The pages of a signed-in user, with a recent login so that only the token is missing.
    nextStep();
    await signedIn(browser);
    const before = await accountState();
    await forged(browser, DEACTIVATE, {});
    await forged(browser, GENERATE, {});
    await forged(browser, ACTIVATE, { code: totp.code() });
    expect(await accountState()).toEqual(before);

    // Reauthentication by code records nothing.
    latchkey.clock.advance(STALE_MS);
    const authenticatedAt = async () => (await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.data._authenticated_at;
    const stale = await authenticatedAt();
    await forged(browser, REAUTHENTICATE_BY_CODE, { code: totp.code(), next: DEACTIVATE });
    expect(await authenticatedAt()).toBe(stale);
    expect((await browser.get(DEACTIVATE)).headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(DEACTIVATE)}`);

    // Activation by a user without TOTP, with a setup under way: nothing is created.
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    const other = browser.another();
    await other.post('/accounts/login/', { login: 'grace', password: PASSWORD });
    const secret = /id="mfa-totp-secret">([A-Z2-7]+)</.exec((await other.get(ACTIVATE)).body)![1]!;
    await forged(other, ACTIVATE, { code: totpCodeAt(latchkey.deps, secret, latchkey.clock.now()) });
    expect(await latchkey.deps.store.authenticators.listForUser(grace.id)).toEqual([]);
    expect(await accountState()).toEqual(before);
  });

  it('a password reset of an account with MFA signs nobody in, mails a notice, and the next login still asks for the code', async () => {
    await setUp();
    const client = browser.another();
    // A browser that passed the old password and waits at the code step...
    const waiting = browser.another();
    expect((await login(waiting, PASSWORD)).headers.location).toBe(AUTHENTICATE);
    expect((await client.post('/accounts/password/reset/', { email: 'ada@example.com' })).headers.location).toBe('/accounts/password/reset/done/');
    const formPath = (await client.get(resetLinkPath(latchkey))).headers.location as string;
    const done = await client.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe('/accounts/password/reset/key/done/');
    expect(await signedInUserId(client)).toBeNull();
    expect(await userSessions()).toEqual([]);
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toContain('[Test Site] Your password has been reset');
    expect(latchkey.mailer.lastTo('ada@example.com')?.subject).toBe('[Test Site] Your password has been reset');

    // ...cannot finish that login after the reset, not even with a right code.
    expect((await waiting.post(AUTHENTICATE, { code: totp.recoveryCodes[0]! })).headers.location).toBe('/accounts/login/');
    expect(await signedInUserId(waiting)).toBeNull();

    // The account pages still answer as to a stranger in the browser that reset it.
    expect((await client.get('/accounts/2fa/')).headers.location).toBe('/accounts/login/?next=%2Faccounts%2F2fa%2F');

    const afterReset = await login(client, NEW_PASSWORD);
    expect(afterReset.headers.location).toBe(AUTHENTICATE);
    expect(await userSessions()).toEqual([]);
    expect((await client.post(AUTHENTICATE, { code: totp.code() })).statusCode).toBe(302);
    expect(await signedInUserId(client)).toBe(ada.id);
  });
});
