import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';
const TOKEN_INVALID = {
  message: 'The password reset link was invalid, possibly because it has already been used. Please request a new password reset.',
  code: 'token_invalid',
  param: 'key',
};

describe.each(testDatabaseKinds())('headless passwords on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    let api: HeadlessTestClient;
    let ada: User;

    async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}) {
      latchkey = await createTestLatchkey({ kind, ...settings });
      ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
    }

    /** The key in the last reset link mailed to `address` (/accounts/password/reset/key/<key>/). */
    function mailedKey(address: string): string {
      const match = /\/accounts\/password\/reset\/key\/([^/\s]+)\//.exec(latchkey.mailer.lastTo(address)?.text ?? '');
      if (!match) throw new Error(`no reset link was mailed to ${address}`);
      return match[1]!;
    }

    async function requestKey(): Promise<string> {
      expect((await api.post('/auth/password/request', { email: 'ada@example.com' })).status).toBe(200);
      return mailedKey('ada@example.com');
    }

    const login = (password: string, on = api.another()) => on.post('/auth/login', { username: 'ada', password });

    describe('auth/password/request', () => {
      it('answers known and unknown addresses alike, and mails only the account', async () => {
        await setUp();
        const known = await api.post('/auth/password/request', { email: 'ADA@example.com' });
        const unknown = await api.post('/auth/password/request', { email: 'nobody@example.com' });
        expect(known.status).toBe(200);
        expect(known.body).toEqual({ status: 200 });
        expect(unknown.body).toEqual(known.body);
        expect(unknown.headers['cache-control']).toBe('no-store');
        expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
        expect(latchkey.mailer.outbox[0]!.text).toContain('http://testserver/accounts/password/reset/key/');
      });

      it('refuses what is not one address on the email field', async () => {
        await setUp();
        const cases = [
          [{ email: 'not an address' }, 'invalid', 'Enter a valid email address.'],
          [{ email: 'ada@example.com,eve@example.com' }, 'invalid', 'Enter a valid email address.'],
          [{ email: '' }, 'required', 'This field is required.'],
          [{ email: ['ada@example.com'] }, 'required', 'This field is required.'],
        ] as const;
        for (const [body, code, message] of cases) {
          const response = await api.post('/auth/password/request', body);
          expect(response.status).toBe(400);
          expect(response.body.errors).toEqual([{ message, code, param: 'email' }]);
        }
        expect(latchkey.mailer.outbox).toEqual([]);
      });

      it('limits requests per address with 429 and Retry-After', async () => {
        await setUp({ settings: { ACCOUNT_RATE_LIMITS: { reset_password: '1/m/key' } } });
        expect((await api.post('/auth/password/request', { email: 'ada@example.com' })).status).toBe(200);
        const refused = await api.post('/auth/password/request', { email: 'ada@example.com' });
        expect(refused.status).toBe(429);
        expect(refused.headers['retry-after']).toBe('60');
        expect(latchkey.mailer.outbox).toHaveLength(1);
      });
    });

    describe('auth/password/reset', () => {
      it("tells whose key a mailed key is, and refuses anything else as token_invalid", async () => {
        await setUp();
        const key = await requestKey();
        const info = await api.get('/auth/password/reset', { headers: { 'x-password-reset-key': key } });
        expect(info.status).toBe(200);
        expect(info.body).toEqual({ status: 200, data: { user: { id: ada.id, display: 'ada', has_usable_password: true, email: 'ada@example.com', username: 'ada' } } });
        for (const headers of [{}, { 'x-password-reset-key': 'forged' }, { 'x-password-reset-key': `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` }] as Record<string, string>[]) {
          const refused = await api.get('/auth/password/reset', { headers });
          expect(refused.status).toBe(400);
          expect(refused.body.errors).toEqual([TOKEN_INVALID]);
        }
      });

      it('sets the new password with the mailed key, signs nobody in, and ends every session', async () => {
        await setUp();
        const elsewhere = api.another();
        expect((await login(PASSWORD, elsewhere)).status).toBe(200);
        const key = await requestKey();
        const reset = await api.post('/auth/password/reset', { key, password: NEW_PASSWORD });
        expect(reset.status).toBe(401);
        expect(reset.body).toEqual({ status: 401, data: { flows: [{ id: 'login' }, { id: 'signup' }] }, meta: { is_authenticated: false } });
        expect((await elsewhere.get('/auth/session')).status).toBe(client === 'app' ? 410 : 401);
        expect((await login(PASSWORD)).status).toBe(400);
        expect((await login(NEW_PASSWORD)).status).toBe(200);
        expect(latchkey.mailer.lastTo('ada@example.com')?.subject).toBe('[Test Site] Your password has been reset');
        // The key worked once.
        const again = await api.post('/auth/password/reset', { key, password: 'yet another passphrase' });
        expect(again.status).toBe(400);
        expect(again.body.errors).toEqual([TOKEN_INVALID]);
      });

      it('leaves an account with MFA behind its second factor', async () => {
        await setUp();
        await activateTotpFor(latchkey, ada);
        const key = await requestKey();
        expect((await api.post('/auth/password/reset', { key, password: NEW_PASSWORD })).status).toBe(401);
        const next = await login(NEW_PASSWORD);
        expect(next.status).toBe(401);
        expect(next.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
      });

      it('refuses a weak password on the password field and keeps the key usable', async () => {
        await setUp();
        const key = await requestKey();
        const weak = await api.post('/auth/password/reset', { key, password: 'short' });
        expect(weak.status).toBe(400);
        // Every validator's refusal, each on the field, as Django lists them.
        expect(weak.body.errors).toEqual([expect.objectContaining({ code: 'password_too_short', param: 'password' }), expect.objectContaining({ code: 'password_too_common', param: 'password' })]);
        const missing = await api.post('/auth/password/reset', { key });
        expect(missing.body.errors).toEqual([{ message: 'This field is required.', code: 'required', param: 'password' }]);
        expect((await api.post('/auth/password/reset', { key, password: NEW_PASSWORD })).status).toBe(401);
      });

      it('refuses a forged, missing or mistyped key as token_invalid and changes nothing', async () => {
        await setUp();
        for (const body of [{ key: 'forged', password: NEW_PASSWORD }, { password: NEW_PASSWORD }, { key: { $ne: '' }, password: NEW_PASSWORD }]) {
          const response = await api.post('/auth/password/reset', body);
          expect(response.status).toBe(400);
          expect(response.body.errors).toEqual([TOKEN_INVALID]);
        }
        expect((await login(PASSWORD)).status).toBe(200);
      });
    });

    describe('account/password/change', () => {
      it('answers 401 when signed out', async () => {
        await setUp();
        const response = await api.post('/account/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD });
        expect(response.status).toBe(401);
        expect(response.body.meta).toEqual({ is_authenticated: false });
        expect((await login(PASSWORD)).status).toBe(200);
      });

      it('changes the password, rotates this session and ends every other one', async () => {
        await setUp();
        expect((await login(PASSWORD, api)).status).toBe(200);
        const elsewhere = api.another();
        expect((await login(PASSWORD, elsewhere)).status).toBe(200);
        const before = client === 'app' ? api.sessionToken : api.cookies.get(latchkey.deps.settings.SESSION_COOKIE_NAME);
        expect(before).toBeDefined();

        const changed = await api.post('/account/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD });
        expect(changed.status).toBe(200);
        expect(changed.body.data.user).toMatchObject({ id: ada.id, has_usable_password: true });
        expect(changed.body.meta.is_authenticated).toBe(true);
        const after = client === 'app' ? changed.body.meta.session_token : api.cookies.get(latchkey.deps.settings.SESSION_COOKIE_NAME);
        expect(after).toEqual(expect.any(String));
        expect(after).not.toBe(before);

        // This client goes on with its new session; the old id or token is dead, and so is the other client's.
        expect((await api.get('/auth/session')).status).toBe(200);
        const stale = api.another();
        if (client === 'app') stale.sessionToken = before;
        else stale.cookies.set(latchkey.deps.settings.SESSION_COOKIE_NAME, before!);
        expect((await stale.get('/auth/session')).status).toBe(client === 'app' ? 410 : 401);
        expect((await elsewhere.get('/auth/session')).status).toBe(client === 'app' ? 410 : 401);
        expect((await login(NEW_PASSWORD)).status).toBe(200);
        expect(latchkey.mailer.lastTo('ada@example.com')?.subject).toBe('[Test Site] Your password has been changed');
      });

      it('refuses a wrong or missing current password and a missing or weak new one, each on its field, changing nothing', async () => {
        await setUp();
        await login(PASSWORD, api);
        const cases = [
          [{ current_password: 'wrong password', new_password: NEW_PASSWORD }, { message: 'Please type your current password.', code: 'incorrect_password', param: 'current_password' }],
          [{ new_password: NEW_PASSWORD }, { message: 'This field is required.', code: 'required', param: 'current_password' }],
          [{ current_password: PASSWORD }, { message: 'This field is required.', code: 'required', param: 'new_password' }],
          [{ current_password: PASSWORD, new_password: 'x7Qp' }, expect.objectContaining({ code: 'password_too_short', param: 'new_password' })],
        ] as const;
        for (const [body, error] of cases) {
          const response = await api.post('/account/password/change', body);
          expect(response.status).toBe(400);
          expect(response.body.errors).toEqual([error]);
        }
        expect((await api.get('/auth/session')).status).toBe(200);
        expect((await login(PASSWORD)).status).toBe(200);
      });

      it('sets a first password for an account without one, no current password asked', async () => {
        await setUp();
        const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: null, emailVerified: true });
        // An account without a password signs in some other way (a provider); here the test makes the session.
        const session = await latchkey.deps.sessions.create({ userId: grace.id });
        if (client === 'app') api.sessionToken = session.id;
        else api.cookies.set(latchkey.deps.settings.SESSION_COOKIE_NAME, session.id);
        expect((await api.get('/auth/session')).body.data.user).toMatchObject({ has_usable_password: false });
        const response = await api.post('/account/password/change', { new_password: NEW_PASSWORD });
        expect(response.status).toBe(200);
        expect(response.body.data.user).toMatchObject({ id: grace.id, has_usable_password: true });
        expect((await api.another().post('/auth/login', { username: 'grace', password: NEW_PASSWORD })).status).toBe(200);
      });

      if (client === 'app') {
        it('answers 410 to a session token that names no session', async () => {
          await setUp();
          const response = await api.post('/account/password/change', { current_password: PASSWORD, new_password: NEW_PASSWORD }, { headers: { 'x-session-token': 'gone' } });
          expect(response.status).toBe(410);
        });
      }
    });
  });
});
