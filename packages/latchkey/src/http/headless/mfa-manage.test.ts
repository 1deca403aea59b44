/**
 * Managing second factors through the headless API: the authenticators list, activating an
 * authenticator app from its secret to its first code, deactivating it, and viewing and
 * regenerating recovery codes; for both clients on every database, with the attacks on them: old
 * recovery codes must die, viewing them needs a recent proof, no factor changes without one, and no
 * authenticator is activated with an unverified address.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, totpCodeAt, type ActivatedTotp } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
/** Past the five minutes within which a login counts as a recent proof of identity. */
const STALE_MS = 301 * 1000;

/** A six-digit code that is certainly not `code`. */
function otherThan(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(code.length, '0');
}

describe.each(testDatabaseKinds())('headless management of second factors on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(client: 'browser' | 'app', options: { emailVerified?: boolean } = {}): Promise<HeadlessTestClient> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional' } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: options.emailVerified ?? true });
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  const now = () => latchkey.clock.now().getTime() / 1000;
  const codeFor = (secret: string) => totpCodeAt(latchkey.deps, secret, latchkey.clock.now());

  /** Ada signed in on `api` with her password and, when she has one, her authenticator app. */
  async function signIn(api: HeadlessTestClient, totp?: ActivatedTotp): Promise<void> {
    const login = await api.post('/auth/login', { username: 'ada', password: PASSWORD });
    if (totp) expect((await api.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
    else expect(login.status).toBe(200);
  }

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('answers 401 to a stranger on every management route', async () => {
      const api = await setUp(client);
      expect((await api.get('/account/authenticators')).status).toBe(401);
      expect((await api.get('/account/authenticators/totp')).status).toBe(401);
      for (const response of [
        await api.post('/account/authenticators/totp', { code: '123456' }),
        await api.delete('/account/authenticators/totp'),
        await api.get('/account/authenticators/recovery-codes'),
        await api.post('/account/authenticators/recovery-codes'),
      ]) {
        expect(response.status).toBe(401);
        expect(response.body.data.flows).toEqual([{ id: 'login' }, { id: 'signup' }]);
      }
    });

    it('activates an authenticator app: the same secret until a right code, then a new session and recovery codes', async () => {
      const api = await setUp(client);
      await signIn(api);
      expect((await api.get('/account/authenticators')).body.data).toEqual([]);

      const setup = await api.get('/account/authenticators/totp');
      expect(setup.status).toBe(404);
      const { secret, totp_url: totpUrl } = setup.body.meta as { secret: string; totp_url: string };
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      const url = new URL(totpUrl);
      expect(`${url.protocol}//${url.host}${url.pathname}`).toBe('otpauth://totp/Test%20Site:ada');
      expect(Object.fromEntries(url.searchParams)).toEqual({ secret, issuer: 'Test Site', algorithm: 'SHA1', digits: '6', period: '30' });
      expect((await api.get('/account/authenticators/totp')).body.meta.secret).toBe(secret);

      const wrong = await api.post('/account/authenticators/totp', { code: otherThan(codeFor(secret)) });
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors).toEqual([{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }]);
      // A wrong code does not change the secret under the person's eyes.
      expect((await api.get('/account/authenticators/totp')).body.meta.secret).toBe(secret);

      const oldToken = api.sessionToken;
      const oldCookie = api.cookies.get(latchkey.deps.settings.SESSION_COOKIE_NAME);
      const activated = await api.post('/account/authenticators/totp', { code: codeFor(secret) });
      expect(activated.status).toBe(200);
      expect(activated.body.data).toEqual({ type: 'totp', created_at: now(), last_used_at: null });
      expect(activated.body.meta.recovery_codes_generated).toBe(true);
      // A new factor is a change of privilege: the session id or token seen before it is dead.
      if (client === 'app') {
        expect(activated.body.meta.session_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(activated.body.meta.session_token).not.toBe(oldToken);
        const replayed = api.another();
        replayed.sessionToken = oldToken;
        expect((await replayed.get('/auth/session')).status).toBe(410);
      } else {
        const newCookie = api.cookies.get(latchkey.deps.settings.SESSION_COOKIE_NAME);
        expect(newCookie).toBeDefined();
        expect(newCookie).not.toBe(oldCookie);
        const replayed = api.another();
        replayed.cookies.set(latchkey.deps.settings.SESSION_COOKIE_NAME, oldCookie!);
        expect((await replayed.get('/auth/session')).status).toBe(401);
      }
      expect((await api.get('/auth/session')).status).toBe(200);
      expect((await api.get('/account/authenticators/totp')).body).toEqual({ status: 200, data: { type: 'totp', created_at: now(), last_used_at: null } });
      expect((await api.get('/account/authenticators')).body.data).toEqual([
        { type: 'totp', created_at: now(), last_used_at: null },
        { type: 'recovery_codes', created_at: now(), last_used_at: null, total_code_count: 10, unused_code_count: 10 },
      ]);
      expect(latchkey.mailer.outbox.map((mail) => mail.to)).toContainEqual(['ada@example.com']);

      // The next login needs the app's code, and the code that activated it is used up.
      const other = api.another();
      await other.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect((await other.post('/auth/2fa/authenticate', { code: codeFor(secret) })).status).toBe(400);
      latchkey.clock.advance(30_000);
      expect((await other.post('/auth/2fa/authenticate', { code: codeFor(secret) })).status).toBe(200);
      const [totp] = (await api.get('/account/authenticators')).body.data as { last_used_at: number }[];
      expect(totp!.last_used_at).toBe(now());
    });

    it('refuses activation with an unverified address, without a recent proof, and once an app is active', async () => {
      const api = await setUp(client, { emailVerified: false });
      await signIn(api);
      const unverified = await api.get('/account/authenticators/totp');
      expect(unverified.status).toBe(409);
      expect(unverified.body).toEqual({ status: 409 });
      expect((await api.post('/account/authenticators/totp', { code: '123456' })).status).toBe(409);

      await latchkey.deps.store.emailAddresses.markVerified((await latchkey.deps.store.emailAddresses.listForUser(ada.id))[0]!.id);
      const { secret } = (await api.get('/account/authenticators/totp')).body.meta as { secret: string };
      latchkey.clock.advance(STALE_MS);
      const stale = await api.post('/account/authenticators/totp', { code: codeFor(secret) });
      expect(stale.status).toBe(401);
      expect(stale.body.data.flows).toEqual([{ id: 'reauthenticate' }]);
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);

      // Another tab activates an app meanwhile: this one's right code meets a conflict.
      expect((await api.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      await activateTotpFor(latchkey, (await latchkey.deps.store.users.findById(ada.id))!);
      const conflict = await api.post('/account/authenticators/totp', { code: codeFor(secret) });
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual({ status: 409 });
      expect((await latchkey.deps.store.authenticators.listForUser(ada.id)).map((authenticator) => authenticator.type)).toEqual(['totp', 'recovery_codes']);
    });

    it('deactivates the app (and its recovery codes) only after a recent proof', async () => {
      const api = await setUp(client);
      const totp = await activateTotpFor(latchkey, ada);
      await signIn(api, totp);
      latchkey.clock.advance(STALE_MS);
      const stale = await api.delete('/account/authenticators/totp');
      expect(stale.status).toBe(401);
      expect(stale.body.data.flows).toEqual([{ id: 'reauthenticate' }, { id: 'mfa_reauthenticate', types: ['totp', 'recovery_codes'] }]);
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toHaveLength(2);

      expect((await api.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      const done = await api.delete('/account/authenticators/totp');
      expect(done.status).toBe(200);
      expect(done.body).toEqual({ status: 200 });
      expect((await api.get('/account/authenticators')).body.data).toEqual([]);
      expect((await api.delete('/account/authenticators/totp')).status).toBe(404);
      // The next login needs only the password.
      expect((await api.another().post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
    });

    it('shows the recovery codes after a recent proof, and regenerates them: the old ones die', async () => {
      const api = await setUp(client);
      const totp = await activateTotpFor(latchkey, ada);
      const activatedAt = now() - 30;
      await signIn(api, totp);

      const shown = await api.get('/account/authenticators/recovery-codes');
      expect(shown.status).toBe(200);
      expect(shown.body.data).toEqual({
        type: 'recovery_codes',
        created_at: activatedAt,
        last_used_at: null,
        total_code_count: 10,
        unused_code_count: 10,
        unused_codes: totp.recoveryCodes,
      });

      latchkey.clock.advance(STALE_MS);
      expect((await api.get('/account/authenticators/recovery-codes')).status).toBe(401);
      expect((await api.post('/account/authenticators/recovery-codes')).status).toBe(401);
      expect((await api.post('/auth/2fa/reauthenticate', { code: totp.recoveryCodes[0] })).status).toBe(200);

      const regenerated = await api.post('/account/authenticators/recovery-codes');
      expect(regenerated.status).toBe(200);
      const fresh = regenerated.body.data.unused_codes as string[];
      expect(fresh).toHaveLength(10);
      expect(fresh.some((code) => totp.recoveryCodes.includes(code))).toBe(false);
      expect(regenerated.body.data).toMatchObject({ type: 'recovery_codes', created_at: now(), last_used_at: null, total_code_count: 10, unused_code_count: 10 });
      expect((await api.get('/account/authenticators/recovery-codes')).body.data.unused_codes).toEqual(fresh);

      // An old code no longer finishes a login; a new one does, once.
      const other = api.another();
      await other.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect((await other.post('/auth/2fa/authenticate', { code: totp.recoveryCodes[1] })).status).toBe(400);
      expect((await other.post('/auth/2fa/authenticate', { code: fresh[0] })).status).toBe(200);
      const listed = (await api.get('/account/authenticators')).body.data as { type: string; unused_code_count?: number; last_used_at: number | null }[];
      expect(listed.find((authenticator) => authenticator.type === 'recovery_codes')).toMatchObject({ unused_code_count: 9, last_used_at: now() });
    });

    it('has no recovery codes to show or regenerate without a second factor', async () => {
      const api = await setUp(client);
      await signIn(api);
      expect((await api.get('/account/authenticators/recovery-codes')).body).toEqual({ status: 404 });
      const refused = await api.post('/account/authenticators/recovery-codes');
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ message: 'Recovery codes can only be generated once two-factor authentication is active.', code: 'cannot_generate_recovery_codes' }]);
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);
    });
  });

  it('carries a setup begun on the pages on through the API, with the same secret', async () => {
    const api = await setUp('browser');
    await signIn(api);
    const page = await api.app.inject({ method: 'GET', url: '/accounts/2fa/totp/activate/', headers: { host: 'testserver' }, cookies: Object.fromEntries(api.cookies) });
    expect(page.statusCode).toBe(200);
    const { secret } = (await api.get('/account/authenticators/totp')).body.meta as { secret: string };
    expect(page.body).toContain(secret);
    expect((await api.post('/account/authenticators/totp', { code: codeFor(secret) })).status).toBe(200);
  });
});
