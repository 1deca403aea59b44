/**
 * The headless second step of a login (auth/2fa/authenticate), "trust this browser"
 * (auth/2fa/trust) and reauthentication by code (auth/2fa/reauthenticate), for both clients on
 * every database, with the attacks on it that apply to the API: a logout mid-MFA that must kill the
 * pending login, reaching anything after the password step alone, and replaying codes or guessing
 * past the lockout.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setUserPassword, createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { MFA_TRUST_COOKIE } from '../../mfa/trust.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
/** Past the five minutes within which a login counts as a recent proof of identity. */
const STALE_MS = 301 * 1000;
const MFA_PENDING = { id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] };
const START_FLOWS = [{ id: 'login' }, { id: 'signup' }];

/** A six-digit code that is certainly not `code`. */
function otherThan(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(code.length, '0');
}

describe.each(testDatabaseKinds())('headless two-factor login on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(() => latchkey.destroy());

  /** Ada, with a verified address, an authenticator app and recovery codes; a client of the given kind. */
  async function setUp(client: 'browser' | 'app', settings: Partial<SettingValues> = {}): Promise<HeadlessTestClient> {
    latchkey = await createTestLatchkey({ kind, settings });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  const passwordStep = (api: HeadlessTestClient, password = PASSWORD) => api.post('/auth/login', { username: 'ada', password });
  const now = () => latchkey.clock.now().getTime() / 1000;
  const logins = async () => (await latchkey.deps.store.auditLog.listForUser(ada.id, 1000)).filter((record) => record.event === 'user_logged_in');

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('logs in with the password, then a code: 401 mfa_authenticate pending, then 200 with both methods', async () => {
      const api = await setUp(client);
      const first = await passwordStep(api);
      expect(first.status).toBe(401);
      expect(first.body).toMatchObject({ status: 401, data: { flows: [...START_FLOWS, MFA_PENDING] }, meta: { is_authenticated: false } });
      // No session of Ada's exists yet; the pending state survives a look at the session.
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual(MFA_PENDING);

      const second = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(second.status).toBe(200);
      expect(second.body.data.user).toMatchObject({ id: ada.id, username: 'ada' });
      expect(second.body.data.methods).toEqual([
        { method: 'password', at: now(), username: 'ada' },
        { method: 'mfa', at: now(), type: 'totp' },
      ]);
      expect(second.body.meta.is_authenticated).toBe(true);
      expect((await api.get('/auth/session')).status).toBe(200);
      expect((await logins()).map((record) => record.data.method)).toEqual(['password+totp']);
      // The login is over: the code step has nothing left to finish.
      expect((await api.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(401);
    });

    it('logs in with a recovery code, which then is used up', async () => {
      const api = await setUp(client);
      await passwordStep(api);
      const code = totp.recoveryCodes[3]!;
      const done = await api.post('/auth/2fa/authenticate', { code });
      expect(done.status).toBe(200);
      expect((done.body.data.methods as unknown[]).at(-1)).toEqual({ method: 'mfa', at: now(), type: 'recovery_codes' });
      await api.delete('/auth/session');

      const again = api.another();
      await passwordStep(again);
      const replay = await again.post('/auth/2fa/authenticate', { code });
      expect(replay.status).toBe(400);
      expect(replay.body.errors).toEqual([{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }]);
    });

    it('refuses a TOTP code used before, even for a new login', async () => {
      const api = await setUp(client);
      await passwordStep(api);
      const code = totp.code();
      expect((await api.post('/auth/2fa/authenticate', { code })).status).toBe(200);
      await api.delete('/auth/session');

      const thief = api.another();
      await passwordStep(thief);
      const replay = await thief.post('/auth/2fa/authenticate', { code });
      expect(replay.status).toBe(400);
      expect(replay.body.errors?.[0]?.code).toBe('incorrect_code');
      expect((await thief.get('/auth/session')).body.data.flows).toContainEqual(MFA_PENDING);
    });

    it('counts wrong codes like wrong passwords: 400 each, then 429 with Retry-After, even for the right code', async () => {
      const api = await setUp(client);
      await passwordStep(api);
      // login_failed allows five failures per account in five minutes (the defaults).
      for (let attempt = 1; attempt <= 5; attempt += 1) {
        const wrong = await api.post('/auth/2fa/authenticate', { code: otherThan(totp.code()) });
        expect(wrong.status).toBe(400);
        expect(wrong.body.errors).toEqual([{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }]);
      }
      const limited = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.body.errors?.[0]?.code).toBe('too_many_requests');
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
      // A missing or malformed code is a wrong code, never a 500.
      latchkey.clock.advance(STALE_MS * 2);
      expect((await api.post('/auth/2fa/authenticate', { code: ['123456'] })).status).toBe(400);
      expect((await api.post('/auth/2fa/authenticate', {})).status).toBe(400);
    });

    it('forgets the pending login at logout mid-MFA: the code no longer signs anyone in', async () => {
      const api = await setUp(client);
      await passwordStep(api);
      const pendingToken = api.sessionToken;
      const pendingCookie = api.cookies.get(latchkey.deps.settings.SESSION_COOKIE_NAME);
      const logout = await api.delete('/auth/session');
      expect(logout.status).toBe(401);
      expect(logout.body.data.flows).toEqual(START_FLOWS);

      if (client === 'app') {
        // The token named the pending login's session, which is gone: 410, then the app starts afresh.
        expect((await api.post('/auth/2fa/authenticate', { code: totp.code() }, { headers: { 'x-session-token': pendingToken! } })).status).toBe(410);
        api.sessionToken = undefined;
      } else {
        // The old cookie, replayed, names nothing.
        const replayed = api.another();
        replayed.cookies.set(latchkey.deps.settings.SESSION_COOKIE_NAME, pendingCookie!);
        const response = await replayed.post('/auth/2fa/authenticate', { code: totp.code() });
        expect(response.status).toBe(401);
        expect(response.body.data.flows).toEqual(START_FLOWS);
      }
      const late = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(late.status).toBe(401);
      expect(late.body.data.flows).toEqual(START_FLOWS);
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
    });

    it('answers 401 on every protected route after the password step alone', async () => {
      const api = await setUp(client);
      await passwordStep(api);
      const requests: [string, () => ReturnType<HeadlessTestClient['get']>][] = [
        ['GET auth/session', () => api.get('/auth/session')],
        ['GET account/email', () => api.get('/account/email')],
        ['POST account/email', () => api.post('/account/email', { email: 'eve@example.com' })],
        ['GET account/authenticators', () => api.get('/account/authenticators')],
        ['GET totp', () => api.get('/account/authenticators/totp')],
        ['POST totp', () => api.post('/account/authenticators/totp', { code: totp.code() })],
        ['DELETE totp', () => api.delete('/account/authenticators/totp')],
        ['GET recovery-codes', () => api.get('/account/authenticators/recovery-codes')],
        ['POST recovery-codes', () => api.post('/account/authenticators/recovery-codes')],
        ['POST 2fa/reauthenticate', () => api.post('/auth/2fa/reauthenticate', { code: totp.code() })],
        ['POST reauthenticate', () => api.post('/auth/reauthenticate', { password: PASSWORD })],
        ['GET sessions', () => api.get('/auth/sessions')],
        ['DELETE sessions', () => api.delete('/auth/sessions', { sessions: [] })],
        ['POST password/change', () => api.post('/account/password/change', { current_password: PASSWORD, new_password: 'another fine passphrase' })],
      ];
      for (const [name, request] of requests) {
        const response = await request();
        expect({ name, status: response.status }).toEqual({ name, status: 401 });
        expect({ name, meta: response.body.meta }).toEqual({ name, meta: { is_authenticated: false } });
        expect({ name, flows: response.body.data?.flows }).toEqual({ name, flows: [...START_FLOWS, MFA_PENDING] });
      }
      // Nothing changed, and the login can still be finished.
      expect((await latchkey.deps.store.authenticators.listForUser(ada.id)).map((authenticator) => authenticator.type)).toEqual(['totp', 'recovery_codes']);
      expect((await api.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
    });

    it('ends a pending login whose password changed meanwhile, even for a right code', async () => {
      const api = await setUp(client);
      await passwordStep(api);
      await setUserPassword(latchkey.deps, ada, 'another fine passphrase');
      const response = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(response.status).toBe(401);
      expect(response.body.data.flows).toEqual(START_FLOWS);
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
    });

    it('answers 401 with the login flows when no login waits for a code', async () => {
      const api = await setUp(client);
      const response = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(response.status).toBe(401);
      expect(response.body.data.flows).toEqual(START_FLOWS);
    });

    it('reauthenticates by code: a stale session must prove itself again, and a code does it', async () => {
      const api = await setUp(client);
      await passwordStep(api);
      await api.post('/auth/2fa/authenticate', { code: totp.code() });
      latchkey.clock.advance(STALE_MS);

      const stale = await api.delete('/account/authenticators/totp');
      expect(stale.status).toBe(401);
      expect(stale.body.data.flows).toEqual([{ id: 'reauthenticate' }, { id: 'mfa_reauthenticate', types: ['totp', 'recovery_codes'] }]);
      expect(stale.body.meta.is_authenticated).toBe(true);

      const wrong = await api.post('/auth/2fa/reauthenticate', { code: otherThan(totp.code()) });
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors).toEqual([{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }]);

      const right = await api.post('/auth/2fa/reauthenticate', { code: totp.code() });
      expect(right.status).toBe(200);
      expect((right.body.data.methods as unknown[]).at(-1)).toEqual({ method: 'mfa', at: now(), type: 'totp', reauthenticated: true });
      expect((await api.delete('/account/authenticators/totp')).status).toBe(200);
    });

    it('refuses a code from a user without a second factor as a wrong code', async () => {
      const api = await setUp(client);
      await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      expect((await api.post('/auth/login', { username: 'bob', password: PASSWORD })).status).toBe(200);
      latchkey.clock.advance(STALE_MS);
      const response = await api.post('/auth/2fa/reauthenticate', { code: totp.code() });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }]);
      // Still not a recent proof of identity.
      expect((await api.get('/account/authenticators/recovery-codes')).status).toBe(401);
    });
  });

  describe('trust this browser', () => {
    const trustCookieOf = (response: Awaited<ReturnType<HeadlessTestClient['get']>>) => response.raw.cookies.find((cookie) => cookie.name === MFA_TRUST_COOKIE);
    const TRUST_PENDING = { id: 'mfa_trust', is_pending: true };

    it('asks after a right code; trusting sets the cookie, logs in, and lets this browser skip the code next time', async () => {
      const api = await setUp('browser', { MFA_TRUST_ENABLED: true });
      await passwordStep(api);
      const asked = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(asked.status).toBe(401);
      expect(asked.body.data.flows).toEqual([...START_FLOWS, TRUST_PENDING]);
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
      expect((await api.get('/auth/session')).body.data.flows).toEqual([...START_FLOWS, TRUST_PENDING]);
      // The code step is over; only the question remains.
      expect((await api.post('/auth/2fa/authenticate', { code: totp.code() })).body.data.flows).toContainEqual(TRUST_PENDING);

      const trusted = await api.post('/auth/2fa/trust', { trust: true });
      expect(trusted.status).toBe(200);
      expect(trusted.body.data.methods).toEqual([
        { method: 'password', at: now(), username: 'ada' },
        { method: 'mfa', at: now(), type: 'totp' },
      ]);
      expect(trustCookieOf(trusted)).toMatchObject({ httpOnly: true, sameSite: 'Lax', maxAge: 14 * 86400, path: '/' });
      expect((await logins()).map((record) => record.data.method)).toEqual(['password+totp']);

      await api.delete('/auth/session');
      latchkey.clock.advance(86400 * 1000);
      const again = await passwordStep(api);
      expect(again.status).toBe(200);
      expect(again.body.data.methods).toEqual([{ method: 'password', at: now(), username: 'ada' }]);
      expect((await logins()).map((record) => record.data.method)).toEqual(['password+trusted_browser', 'password+totp']);

      // Another browser still needs the code.
      const other = api.another();
      expect((await passwordStep(other)).body.data.flows).toContainEqual(MFA_PENDING);
    });

    it('declining logs in without a cookie, and the next login asks for a code again', async () => {
      const api = await setUp('browser', { MFA_TRUST_ENABLED: true });
      await passwordStep(api);
      await api.post('/auth/2fa/authenticate', { code: totp.code() });
      const declined = await api.post('/auth/2fa/trust', { trust: false });
      expect(declined.status).toBe(200);
      expect(trustCookieOf(declined)).toBeUndefined();
      await api.delete('/auth/session');
      expect((await passwordStep(api)).body.data.flows).toContainEqual(MFA_PENDING);
    });

    it('refuses an answer that is not a boolean, and answers 401 when nothing waits for one', async () => {
      const api = await setUp('browser', { MFA_TRUST_ENABLED: true });
      const early = await api.post('/auth/2fa/trust', { trust: true });
      expect(early.status).toBe(401);
      expect(early.body.data.flows).toEqual(START_FLOWS);

      await passwordStep(api);
      // At the code stage the trust question is not open yet.
      expect((await api.post('/auth/2fa/trust', { trust: true })).body.data.flows).toContainEqual(MFA_PENDING);
      await api.post('/auth/2fa/authenticate', { code: totp.code() });
      const malformed = await api.post('/auth/2fa/trust', { trust: 'yes' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors).toEqual([{ message: 'Answer true or false.', code: 'invalid', param: 'trust' }]);
      expect((await api.post('/auth/2fa/trust', { trust: true })).status).toBe(200);
    });

    it('logs nobody in when the password changes while the question is open', async () => {
      const api = await setUp('browser', { MFA_TRUST_ENABLED: true });
      await passwordStep(api);
      await api.post('/auth/2fa/authenticate', { code: totp.code() });
      await setUserPassword(latchkey.deps, ada, 'another fine passphrase');
      const response = await api.post('/auth/2fa/trust', { trust: true });
      expect(response.status).toBe(401);
      expect(response.body.data.flows).toEqual(START_FLOWS);
      expect(trustCookieOf(response)).toBeUndefined();
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
    });

    it('does not ask the app client, which has no trust route', async () => {
      const api = await setUp('app', { MFA_TRUST_ENABLED: true });
      await passwordStep(api);
      expect((await api.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
      // The contract has the trust operation for browsers only.
      expect(api.app.hasRoute({ method: 'POST', url: '/_allauth/app/v1/auth/2fa/trust' })).toBe(false);
      expect(api.app.hasRoute({ method: 'POST', url: '/_allauth/browser/v1/auth/2fa/trust' })).toBe(true);
    });
  });
});
