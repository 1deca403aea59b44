import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('headless login, session and logout on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(client: 'browser' | 'app', options: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...options });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('answers 401 with the login and signup flows before login', async () => {
      const api = await setUp(client);
      const response = await api.get('/auth/session');
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ status: 401, data: { flows: [{ id: 'login' }, { id: 'signup' }] }, meta: { is_authenticated: false } });
      expect(response.headers['cache-control']).toBe('no-store');
    });

    it('logs in with the password, shows the session, and logs out', async () => {
      const api = await setUp(client);
      const login = await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(login.status).toBe(200);
      expect(login.body.data.user).toMatchObject({ username: 'ada', email: 'ada@example.com', has_usable_password: true, display: 'ada' });
      expect(login.body.data.methods).toEqual([{ method: 'password', at: latchkey.clock.now().getTime() / 1000, username: 'ada' }]);
      expect(login.body.meta.is_authenticated).toBe(true);
      if (client === 'app') expect(login.body.meta.session_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      else expect(login.body.meta.session_token).toBeUndefined();
      expect((await api.get('/auth/session')).status).toBe(200);
      expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(409);
      const logout = await api.delete('/auth/session');
      expect(logout.status).toBe(401);
      expect((await api.get('/auth/session')).status).toBe(client === 'app' ? 410 : 401);
    });

    it('refuses a wrong password with allauth\'s code on the password field', async () => {
      const api = await setUp(client);
      const response = await api.post('/auth/login', { username: 'ada', password: 'wrong password' });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ message: 'The username and/or password you specified are not correct.', code: 'username_password_mismatch', param: 'password' }]);
    });

    it('refuses an empty username and an empty password on their fields, both at once', async () => {
      const api = await setUp(client);
      const response = await api.post('/auth/login', { username: ' ', password: '' });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        { message: 'This field is required.', code: 'required', param: 'username' },
        { message: 'This field is required.', code: 'required', param: 'password' },
      ]);
      expect((await api.post('/auth/login', { email: '', password: 'x' })).body.errors).toEqual([{ message: 'This field is required.', code: 'required', param: 'email' }]);
    });
  });
});

describe('headless operations of capabilities Latchkey does not have yet, or the project has not turned on', () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('answers 404 for phone numbers and token refresh, and by default for passkeys and login codes, and config does not advertise them', async () => {
    latchkey = await createTestLatchkey();
    const app = await HeadlessTestClient.createApp(latchkey);
    for (const client of ['browser', 'app'] as const) {
      const api = new HeadlessTestClient(app, client, latchkey);
      const absent: [string, string][] = [
        ['GET', '/auth/webauthn/login'],
        ['GET', '/account/authenticators/webauthn'],
        ['POST', '/auth/phone/verify'],
        ['GET', '/account/phone'],
        ['POST', '/auth/code/request'],
        ['POST', '/tokens/refresh'],
      ];
      for (const [method, path] of absent) {
        const response = await app.inject({ method: method as 'GET' | 'POST', url: api.url(path), headers: { host: 'testserver', 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined });
        expect([response.statusCode, response.json()], `${method} ${path}`).toEqual([404, { status: 404 }]);
      }
      const config = await api.get('/config');
      expect(config.status).toBe(200);
      expect(Object.keys(config.body.data as object).sort()).toEqual(['account', 'mfa', 'socialaccount', 'usersessions']);
      // No provider configured: none offered.
      expect(config.body.data.socialaccount).toEqual({ providers: [] });
      expect(config.body.data.account).toMatchObject({ login_by_code_enabled: false, email_verification_by_code_enabled: false, password_reset_by_code_enabled: false, is_open_for_signup: true, login_methods: ['username'] });
      expect(config.body.data.mfa).toEqual({ supported_types: ['totp', 'recovery_codes'], passkey_login_enabled: false });
    }
    await app.close();
  });
});
