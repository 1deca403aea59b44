/**
 * Attacks through the headless API: account enumeration at login; session fixation, replay after
 * logout, and sessions outliving a password change or reset, a deactivation or their time limits;
 * and CSRF. For the browser client (session cookie, X-CSRFToken) and the app client
 * (X-Session-Token). Every response is checked against the contract and for `cache-control: no-store`.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { makeConfirmationKey } from '../../account/email-confirmation.js';
import { makePasswordResetKey } from '../../account/flows/password-reset.js';
import { createUser, deactivateUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient, type HeadlessRequestOptions, type HeadlessResponse } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';
type Client = 'browser' | 'app';
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A client that, besides the contract, checks that no answer may be cached for someone else to read. */
class NoStoreClient extends HeadlessTestClient {
  constructor(
    app: FastifyInstance,
    kind: Client,
    private readonly site: TestLatchkey,
  ) {
    super(app, kind, site);
  }

  override another(kind: Client = this.kind): NoStoreClient {
    return new NoStoreClient(this.app, kind, this.site);
  }

  override async request(method: Method, path: string, body?: unknown, options?: HeadlessRequestOptions): Promise<HeadlessResponse> {
    const response = await super.request(method, path, body, options);
    expect(response.headers['cache-control'], `${method} ${path} → ${response.status}`).toBe('no-store');
    return response;
  }
}

/** A dead session: 410 for the app (drop the token), 401 for the browser. */
const gone = (client: Client): number => (client === 'app' ? 410 : 401);
const other = (client: Client): Client => (client === 'app' ? 'browser' : 'app');

describe.each(testDatabaseKinds())('headless API security (sessions, CSRF, enumeration) on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let ada: User;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings });
    app = await HeadlessTestClient.createApp(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  const client = (which: Client): NoStoreClient => new NoStoreClient(app, which, latchkey);

  /** What a client holds that names its session: the session cookie, or the session token. */
  function credentialOf(holder: HeadlessTestClient): string | undefined {
    return holder.kind === 'app' ? holder.sessionToken : holder.cookies.get(latchkey.settings.SESSION_COOKIE_NAME);
  }

  /** A new client of this kind that carries only the given cookie or token (a copy, a replay, a plant). */
  function holding(which: Client, credential: string | undefined): NoStoreClient {
    const holder = client(which);
    if (credential === undefined) throw new Error('No credential to hold.');
    if (which === 'app') holder.sessionToken = credential;
    else holder.cookies.set(latchkey.settings.SESSION_COOKIE_NAME, credential);
    return holder;
  }

  async function signedIn(which: Client, totp?: ActivatedTotp, code?: string): Promise<NoStoreClient> {
    const signed = client(which);
    const login = await signed.post('/auth/login', { username: 'ada', password: PASSWORD });
    if (totp) {
      expect(login.status).toBe(401);
      expect((await signed.post('/auth/2fa/authenticate', { code: code ?? totp.code() })).status).toBe(200);
    } else {
      expect(login.status).toBe(200);
    }
    return signed;
  }

  /** A reset key as ada's mail would carry it now (the key depends on her last login, so it is made from the stored account). */
  async function resetKeyOfAda(): Promise<string> {
    return makePasswordResetKey(latchkey.deps, (await latchkey.deps.store.users.findById(ada.id))!);
  }

  const sessionStatus = async (holder: HeadlessTestClient): Promise<number> => (await holder.get('/auth/session')).status;
  const liveSessionsOfAda = async (): Promise<number> => (await latchkey.deps.sessions.listForUser(ada.id)).length;

  describe.each(['browser', 'app'] as const)('%s client', (which) => {
    it('unknown user, wrong password, unverified and inactive accounts get one identical refusal, at one hash each', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
      await createUser(latchkey.deps, { username: 'una', email: 'una@example.com', password: PASSWORD, emailVerified: false });
      const ina = await createUser(latchkey.deps, { username: 'ina', email: 'ina@example.com', password: PASSWORD, emailVerified: true });
      await deactivateUser(latchkey.deps, ina);
      await createUser(latchkey.deps, { username: 'sol', email: 'sol@example.com', password: null, emailVerified: true });
      const answers = [];
      for (const username of ['nobody', 'ada', 'una', 'ina', 'sol']) {
        const attacker = client(which);
        await attacker.get('/config');
        const hashesBefore = latchkey.deps.passwords.stats().completed;
        const response = await attacker.post('/auth/login', { username, password: 'not the passphrase' });
        const { date: _date, ...headers } = response.headers;
        answers.push({ status: response.status, body: response.body, headers, hashes: latchkey.deps.passwords.stats().completed - hashesBefore });
      }
      expect(answers[0]).toMatchObject({ status: 400, body: { errors: [{ code: 'username_password_mismatch', param: 'password' }] }, hashes: 1 });
      for (const answer of answers) expect(answer).toEqual(answers[0]);
    });

    it('a session planted before login is replaced at login, and the planted one is dead', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
      // The attacker gets a real anonymous session of the site (a signup waiting for its mail)...
      const attacker = client(which);
      expect((await attacker.post('/auth/signup', { email: 'mallory@example.com', username: 'mallory', password: PASSWORD })).status).toBe(401);
      const planted = credentialOf(attacker);
      const plantedCsrf = attacker.cookies.get('csrftoken');
      // ...and plants it, with its CSRF cookie, in the victim's browser or app.
      const victim = holding(which, planted);
      if (which === 'browser') victim.cookies.set('csrftoken', plantedCsrf!);
      expect(await sessionStatus(victim)).toBe(401);

      const login = await victim.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(login.status).toBe(200);
      const issued = credentialOf(victim);
      expect(issued).toBeDefined();
      expect(issued).not.toBe(planted);
      if (which === 'app') expect(login.body.meta.session_token).toBe(issued);
      expect(await sessionStatus(victim)).toBe(200);
      expect(await sessionStatus(attacker)).toBe(gone(which));
      expect(await sessionStatus(holding(which, planted))).toBe(gone(which));

      if (which === 'browser') {
        // The CSRF secret changed at login: the one the attacker knows no longer passes.
        expect(victim.cookies.get('csrftoken')).not.toBe(plantedCsrf);
        const forged = await victim.delete('/auth/session', undefined, { headers: { 'x-csrftoken': plantedCsrf! } });
        expect(forged.status).toBe(403);
        expect(await sessionStatus(victim)).toBe(200);
      }
    });

    it('a made-up session id is never adopted', async () => {
      await setUp();
      const madeUp = 'A'.repeat(43);
      const victim = holding(which, madeUp);
      const login = await victim.post('/auth/login', { username: 'ada', password: PASSWORD });
      if (which === 'app') {
        // A token naming no session is answered 410 on every route: the app drops it and starts again.
        expect(login.status).toBe(410);
        expect(await liveSessionsOfAda()).toBe(0);
        expect((await victim.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
      } else {
        expect(login.status).toBe(200);
      }
      expect(credentialOf(victim)).not.toBe(madeUp);
      expect(await sessionStatus(holding(which, madeUp))).toBe(gone(which));
    });

    it('the cookie or token replayed after logout is refused', async () => {
      await setUp();
      const signed = await signedIn(which);
      const credential = credentialOf(signed);
      expect((await signed.delete('/auth/session')).status).toBe(401);
      const replay = holding(which, credential);
      expect(await sessionStatus(replay)).toBe(gone(which));
      expect((await holding(which, credential).get('/account/email')).status).toBe(gone(which));
      expect((await holding(which, credential).post('/account/email', { email: 'eve@example.com' })).status).toBe(gone(which));
      expect(await liveSessionsOfAda()).toBe(0);
      expect(await latchkey.deps.store.emailAddresses.listForUser(ada.id)).toHaveLength(1);
    });

    it('a logout mid-MFA clears the pending login, and the right code no longer completes it', async () => {
      await setUp();
      const totp = await activateTotpFor(latchkey, ada);
      const attempt = client(which);
      const first = await attempt.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(first.status).toBe(401);
      expect(first.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
      const pending = credentialOf(attempt);
      const logout = await attempt.delete('/auth/session');
      expect(logout.status).toBe(401);
      expect(logout.body.data.flows).toEqual([{ id: 'login' }, { id: 'signup' }]);
      // The same client, and a replay of what it held, both give the right code: nothing waits for it.
      const after = await attempt.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(after.status).toBe(gone(which));
      if (which === 'browser') expect(after.body.data.flows).toEqual([{ id: 'login' }, { id: 'signup' }]);
      const replay = holding(which, pending);
      expect((await replay.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(gone(which));
      expect(await sessionStatus(holding(which, pending))).toBe(gone(which));
      expect(await liveSessionsOfAda()).toBe(0);
      // The code was never used: a new login takes it.
      expect((await signedIn(which, totp)).kind).toBe(which);
    });

    it('a password change gives this session a new id or token and ends every other session', async () => {
      await setUp();
      const changer = await signedIn(which);
      const sameKind = await signedIn(which);
      const otherKind = await signedIn(other(which));
      const before = credentialOf(changer);
      const csrfBefore = changer.cookies.get('csrftoken');
      const changed = await changer.post('/account/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD });
      expect(changed.status).toBe(200);
      const after = credentialOf(changer);
      expect(after).toBeDefined();
      expect(after).not.toBe(before);
      if (which === 'app') expect(changed.body.meta.session_token).toBe(after);
      else expect(changer.cookies.get('csrftoken')).not.toBe(csrfBefore);
      expect(await sessionStatus(changer)).toBe(200);
      expect(await sessionStatus(holding(which, before))).toBe(gone(which));
      expect(await sessionStatus(sameKind)).toBe(gone(which));
      expect(await sessionStatus(otherKind)).toBe(gone(other(which)));
      expect(await liveSessionsOfAda()).toBe(1);
    });

    it('a password reset ends every session', async () => {
      await setUp();
      const signed = await signedIn(which);
      const otherKind = await signedIn(other(which));
      const stranger = client(which);
      const reset = await stranger.post('/auth/password/reset', { key: await resetKeyOfAda(), password: NEW_PASSWORD });
      expect(reset.status).toBe(401);
      expect(await sessionStatus(signed)).toBe(gone(which));
      expect(await sessionStatus(otherKind)).toBe(gone(other(which)));
      expect(await sessionStatus(stranger)).toBe(401);
      expect(await liveSessionsOfAda()).toBe(0);
    });

    it('a session idle for SESSION_IDLE_TIMEOUT has ended', async () => {
      await setUp();
      const signed = await signedIn(which);
      const idle = latchkey.settings.SESSION_IDLE_TIMEOUT * 1000;
      latchkey.clock.advance(idle - 1000);
      expect(await sessionStatus(signed)).toBe(200);
      latchkey.clock.advance(idle);
      expect(await sessionStatus(signed)).toBe(gone(which));
      // The app dropped its dead token on the 410, so from here on it asks as a stranger.
      expect((await signed.get('/account/email')).status).toBe(401);
    });

    it('an active session ends at SESSION_COOKIE_AGE however busy it is', async () => {
      await setUp();
      const signed = await signedIn(which);
      const day = 86400 * 1000;
      const age = latchkey.settings.SESSION_COOKIE_AGE * 1000;
      const step = Math.min(latchkey.settings.SESSION_IDLE_TIMEOUT * 1000 - day, day * 3);
      let elapsed = 0;
      while (elapsed + step < age) {
        latchkey.clock.advance(step);
        elapsed += step;
        expect(await sessionStatus(signed), `after ${elapsed / day} days`).toBe(200);
      }
      latchkey.clock.advance(age - elapsed);
      expect(await sessionStatus(signed)).toBe(gone(which));
    });
  });

  it.each(['deactivated', 'deleted'] as const)('an account %s by an admin is locked out of every client at once', async (what) => {
    await setUp();
    const browser = await signedIn('browser');
    const phone = await signedIn('app');
    if (what === 'deactivated') await deactivateUser(latchkey.deps, ada);
    else await latchkey.deps.store.users.delete(ada.id);
    expect(await sessionStatus(browser)).toBe(401);
    expect((await browser.get('/account/email')).status).toBe(401);
    expect(await sessionStatus(phone)).toBe(410);
  });

  it('the session cookie is HttpOnly and SameSite=Lax; the CSRF cookie is readable; the app gets no cookie at all', async () => {
    await setUp();
    const browser = client('browser');
    await browser.get('/auth/session');
    const login = await browser.post('/auth/login', { username: 'ada', password: PASSWORD });
    const cookies = new Map(login.raw.cookies.map((cookie) => [cookie.name, cookie]));
    expect(cookies.get(latchkey.settings.SESSION_COOKIE_NAME)).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookies.get('csrftoken')).toMatchObject({ sameSite: 'Lax', path: '/' });
    expect(cookies.get('csrftoken')?.httpOnly).not.toBe(true);
    const phone = client('app');
    for (const response of [await phone.get('/auth/session'), await phone.post('/auth/login', { username: 'ada', password: PASSWORD }), await phone.delete('/auth/session')]) {
      expect(response.headers['set-cookie']).toBeUndefined();
    }
  });

  describe('CSRF for the browser client', () => {
    /** What a change would touch: the accounts, ada's password, addresses, authenticators and sessions, and the mail. */
    async function snapshot() {
      const { store } = latchkey.deps;
      const user = await store.users.findById(ada.id);
      return {
        accounts: await store.users.count(),
        password: user?.password,
        addresses: (await store.emailAddresses.listForUser(ada.id)).map(({ email, verified, primary }) => ({ email, verified, primary })),
        authenticators: (await store.authenticators.listForUser(ada.id)).map(({ type, data }) => ({ type, data })),
        sessions: (await latchkey.deps.sessions.listForUser(ada.id)).map(({ idHash, sealedData }) => ({ idHash, sealedData })),
        mails: latchkey.mailer.outbox.length,
      };
    }

    /** Each unsafe operation, with a body that would change something if it were let through. */
    type Operation = { method: Exclude<Method, 'GET'>; path: string; body: () => Record<string, unknown>; as: 'anonymous' | 'ada' };
    let totp: ActivatedTotp;
    const operations = (): Operation[] => [
      { method: 'POST', path: '/auth/login', body: () => ({ username: 'ada', password: PASSWORD }), as: 'anonymous' },
      { method: 'POST', path: '/auth/signup', body: () => ({ email: 'newbie@example.com', username: 'newbie', password: PASSWORD }), as: 'anonymous' },
      { method: 'POST', path: '/auth/password/request', body: () => ({ email: 'ada@example.com' }), as: 'anonymous' },
      { method: 'POST', path: '/auth/password/reset', body: () => ({ key: resetKey, password: NEW_PASSWORD }), as: 'anonymous' },
      { method: 'POST', path: '/auth/email/verify', body: () => ({ key: secondAddressKey }), as: 'anonymous' },
      { method: 'POST', path: '/auth/email/verify/resend', body: () => ({}), as: 'anonymous' },
      { method: 'POST', path: '/auth/2fa/authenticate', body: () => ({ code: totp.code() }), as: 'anonymous' },
      { method: 'POST', path: '/auth/provider/redirect', body: () => ({ provider: 'corp', callback_url: '/app/callback', process: 'login' }), as: 'anonymous' },
      { method: 'POST', path: '/auth/provider/token', body: () => ({ provider: 'corp', process: 'login', token: { client_id: 'latchkey', id_token: 'a.b.c' } }), as: 'anonymous' },
      { method: 'POST', path: '/auth/provider/signup', body: () => ({ email: 'social@example.com', username: 'social' }), as: 'anonymous' },
      { method: 'POST', path: '/auth/reauthenticate', body: () => ({ password: PASSWORD }), as: 'ada' },
      { method: 'POST', path: '/auth/2fa/reauthenticate', body: () => ({ code: totp.recoveryCodes[5]! }), as: 'ada' },
      { method: 'POST', path: '/auth/2fa/trust', body: () => ({ trust: true }), as: 'ada' },
      { method: 'DELETE', path: '/auth/sessions', body: () => ({ sessions: sessionIds }), as: 'ada' },
      { method: 'DELETE', path: '/account/providers', body: () => ({ provider: 'corp', account: 'ada-at-corp' }), as: 'ada' },
      { method: 'POST', path: '/account/password/change', body: () => ({ current_password: PASSWORD, new_password: NEW_PASSWORD }), as: 'ada' },
      { method: 'POST', path: '/account/email', body: () => ({ email: 'third@example.com' }), as: 'ada' },
      { method: 'PUT', path: '/account/email', body: () => ({ email: 'second@example.com' }), as: 'ada' },
      { method: 'PATCH', path: '/account/email', body: () => ({ email: 'spare@example.com', primary: true }), as: 'ada' },
      { method: 'DELETE', path: '/account/email', body: () => ({ email: 'spare@example.com' }), as: 'ada' },
      { method: 'POST', path: '/account/authenticators/totp', body: () => ({ code: totp.code() }), as: 'ada' },
      { method: 'DELETE', path: '/account/authenticators/totp', body: () => ({}), as: 'ada' },
      { method: 'POST', path: '/account/authenticators/recovery-codes', body: () => ({}), as: 'ada' },
      // Last of ada's, so that the proper requests made after the attacks find her session alive.
      { method: 'DELETE', path: '/auth/session', body: () => ({}), as: 'ada' },
    ];
    let secondAddressKey: string;
    let resetKey: string;
    let sessionIds: number[];

    /** How a forged request differs from the front end's own; each must be refused. */
    const attacks: [string, (body: Record<string, unknown>, stranger: HeadlessTestClient) => HeadlessRequestOptions, number[]][] = [
      ['without X-CSRFToken', () => ({ csrf: false }), [403]],
      ['with another session’s token', (_body, stranger) => ({ headers: { 'x-csrftoken': stranger.cookies.get('csrftoken')! } }), [403]],
      ['as text/plain (a simple cross-site request)', (body) => ({ csrf: false, payload: JSON.stringify(body), headers: { 'content-type': 'text/plain' } }), [403, 415]],
      ['as a form (a simple cross-site request)', (body) => ({ csrf: false, payload: new URLSearchParams(body as Record<string, string>).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }), [403, 415]],
      ['as text/plain with the token', (body) => ({ payload: JSON.stringify(body), headers: { 'content-type': 'text/plain;charset=UTF-8' } }), [415]],
      ['from a foreign Origin', () => ({ headers: { origin: 'https://evil.example' } }), [403]],
      ['with Sec-Fetch-Site: cross-site', () => ({ headers: { 'sec-fetch-site': 'cross-site' } }), [403]],
    ];

    it('every unsafe operation refuses a forged request and changes nothing', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional' });
      totp = await activateTotpFor(latchkey, ada);
      const { emailAddresses } = latchkey.deps.store;
      await emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: false, primary: false });
      await emailAddresses.add({ userId: ada.id, email: 'spare@example.com', verified: true, primary: false });
      secondAddressKey = makeConfirmationKey(latchkey.deps, (await emailAddresses.findForUser(ada.id, 'second@example.com'))!);
      const victim = await signedIn('browser', totp);
      await signedIn('browser', totp, totp.recoveryCodes[0]);
      resetKey = await resetKeyOfAda();
      // The other browser's session: ending it is a change the victim could make.
      sessionIds = ((await victim.get('/auth/sessions')).body.data as { id: number; is_current: boolean }[]).filter((row) => !row.is_current).map((row) => row.id);
      expect(sessionIds).toHaveLength(1);
      const anonymous = client('browser');
      await anonymous.get('/auth/session');
      const stranger = client('browser');
      await stranger.get('/auth/session');

      const before = await snapshot();
      for (const operation of operations()) {
        const who = operation.as === 'ada' ? victim : anonymous;
        for (const [attack, forge, statuses] of attacks) {
          const body = operation.body();
          const response = await who.request(operation.method, operation.path, body, forge(body, stranger));
          const what = `${operation.method} ${operation.path} ${attack}`;
          expect(statuses, `${what} → ${response.status} ${JSON.stringify(response.body)}`).toContain(response.status);
          if (response.status === 403) expect(response.body.errors?.[0]?.code, what).toBe('csrf_failed');
          expect(await snapshot(), what).toEqual(before);
        }
      }
      expect(await sessionStatus(victim)).toBe(200);
      expect(await sessionStatus(anonymous)).toBe(401);

      // Made properly, every one of them passes the check: what refused them above was the CSRF check.
      // (Ada's own first: a proper password reset would end her session.)
      const adaFirst = [...operations().filter((operation) => operation.as === 'ada'), ...operations().filter((operation) => operation.as === 'anonymous')];
      for (const operation of adaFirst) {
        const who = operation.as === 'ada' ? victim : client('browser');
        const response = await who.request(operation.method, operation.path, operation.body());
        expect([403, 415], `${operation.method} ${operation.path} → ${response.status}`).not.toContain(response.status);
      }
      expect(await latchkey.deps.store.users.count()).toBe(before.accounts + 1);
      expect(await sessionStatus(victim)).toBe(401);
    });
  });

  it('the app client needs no CSRF token, and a browser’s session cookie does not authenticate it', async () => {
    await setUp();
    const browser = await signedIn('browser');
    const cookie = `${latchkey.settings.SESSION_COOKIE_NAME}=${credentialOf(browser)!}; csrftoken=${browser.cookies.get('csrftoken')!}`;
    const phone = client('app');
    const withCookie = await phone.get('/auth/session', { headers: { cookie } });
    expect(withCookie.status).toBe(401);
    expect((await phone.get('/account/email', { headers: { cookie } })).status).toBe(401);
    expect((await phone.post('/account/email', { email: 'eve@example.com' }, { headers: { cookie, 'x-csrftoken': browser.cookies.get('csrftoken')! } })).status).toBe(401);
    // A "logout" carrying the cookie ends nothing: the browser is still signed in.
    expect((await phone.delete('/auth/session', undefined, { headers: { cookie } })).status).toBe(401);
    expect(await sessionStatus(browser)).toBe(200);
    // No CSRF token, no cookie: the app authenticates by its token alone.
    const login = await phone.post('/auth/login', { username: 'ada', password: PASSWORD });
    expect(login.status).toBe(200);
    expect((await phone.post('/account/email', { email: 'second@example.com' })).status).toBe(200);
    expect(await latchkey.deps.store.emailAddresses.listForUser(ada.id)).toHaveLength(2);
  });
});
