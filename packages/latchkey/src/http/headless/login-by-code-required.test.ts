/**
 * ACCOUNT_LOGIN_BY_CODE_REQUIRED through the headless API, both clients, every response validated
 * against allauth's published contract by the test client: a password login answers 401 with
 * `login_by_code` pending, auth/code/confirm takes the mailed code, and the remaining stages follow.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { servedHeadlessDocument } from '../../testing/headless-openapi.js';

const PASSWORD = 'a long enough passphrase';
const INCORRECT = [{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }];
const CODE_PENDING = { id: 'login_by_code', is_pending: true };

describe.each(testDatabaseKinds())('headless login with a required code on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    let api: HeadlessTestClient;
    let ada: User;

    async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
      latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_REQUIRED: true, ...settings } });
      ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
    }

    function mailedCode(address = 'ada@example.com'): string {
      const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
      if (code === undefined) throw new Error(`no code was mailed to ${address}`);
      return code;
    }

    const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
    const logIn = (as: HeadlessTestClient = api) => as.post('/auth/login', { username: 'ada', password: PASSWORD });

    it('stops the password login at login_by_code, refuses a wrong code, and signs in with the right one', async () => {
      await setUp();
      const login = await logIn();
      expect(login.status).toBe(401);
      expect(login.body.data.flows).toContainEqual(CODE_PENDING);
      expect((login.body.data.flows as { id: string }[]).filter((flow) => flow.id === 'login_by_code')).toHaveLength(1);
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual(CODE_PENDING);
      const code = mailedCode();
      const wrong = await api.post('/auth/code/confirm', { code: wrongFor(code) });
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors).toEqual(INCORRECT);
      const right = await api.post('/auth/code/confirm', { code });
      expect(right.status).toBe(200);
      expect(right.body.data.user.id).toBe(ada.id);
      expect(right.body.data.methods).toEqual([expect.objectContaining({ method: 'password' }), expect.objectContaining({ method: 'code', email: 'ada@example.com' })]);
      expect((await api.get('/auth/session')).status).toBe(200);
    });

    it('asks a TOTP user for the second factor after the code, and auth/2fa/authenticate cannot come first', async () => {
      await setUp();
      const totp = await activateTotpFor(latchkey, ada);
      await logIn();
      const skipped = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(skipped.status).toBe(401);
      expect(skipped.body.data.flows).toContainEqual(CODE_PENDING);
      const afterCode = await api.post('/auth/code/confirm', { code: mailedCode() });
      expect(afterCode.status).toBe(401);
      expect(afterCode.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
      expect(afterCode.body.data.flows).not.toContainEqual(CODE_PENDING);
      const done = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(done.status).toBe(200);
      expect((done.body.data.methods as { method: string }[]).map((method) => method.method)).toEqual(['password', 'code', 'mfa']);
    });

    it('after MAX_ATTEMPTS wrong codes the right one ends the login instead of signing in', async () => {
      await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 2 });
      await logIn();
      const code = mailedCode();
      for (let attempt = 0; attempt < 2; attempt += 1) expect((await api.post('/auth/code/confirm', { code: wrongFor(code) })).status).toBe(400);
      const late = await api.post('/auth/code/confirm', { code });
      expect(late.status).toBe(401);
      expect(late.body.data.flows).not.toContainEqual(CODE_PENDING);
      // Nothing is pending any more.
      expect((await api.post('/auth/code/confirm', { code })).status).toBe(409);
    });

    it('ends the login for a code given after ACCOUNT_LOGIN_BY_CODE_TIMEOUT', async () => {
      await setUp({ ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180 });
      await logIn();
      latchkey.clock.advance(180_000);
      const late = await api.post('/auth/code/confirm', { code: mailedCode() });
      expect(late.status).toBe(401);
      expect(late.body.data.flows).not.toContainEqual(CODE_PENDING);
    });

    it('takes the code only in the session whose login asked for it', async () => {
      await setUp();
      await logIn();
      const other = api.another();
      expect((await other.post('/auth/code/confirm', { code: mailedCode() })).status).toBe(409);
      expect((await api.post('/auth/code/confirm', { code: mailedCode() })).status).toBe(200);
    });

    it("with ['socialaccount'], leaves password logins alone", async () => {
      await setUp({ ACCOUNT_LOGIN_BY_CODE_REQUIRED: ['socialaccount'] });
      expect((await logIn()).status).toBe(200);
      expect(latchkey.mailer.outbox).toEqual([]);
    });

    it('refuses the login of an account with no address to mail a code to', async () => {
      await setUp();
      await createUser(latchkey.deps, { username: 'hermit', password: PASSWORD, emailVerified: false });
      const refused = await api.post('/auth/login', { username: 'hermit', password: PASSWORD });
      expect(refused.status).toBe(403);
      expect(refused.body.errors).toEqual([expect.objectContaining({ code: 'no_email_address' })]);
      expect((await api.get('/auth/session')).body.data.flows).not.toContainEqual(CODE_PENDING);
    });
  });

  it('serves auth/code/confirm (not auth/code/request) where only the requirement is on, and describes just that', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_REQUIRED: ['password'] } });
    const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'browser', latchkey);
    expect((await api.get('/config')).body.data.account.login_by_code_enabled).toBe(false);
    expect((await api.post('/auth/code/request', { email: 'ada@example.com' })).status).toBe(404);
    expect((await api.post('/auth/code/confirm', { code: 'ABCDEF' })).status).toBe(409);
    const paths = Object.keys((await servedHeadlessDocument({ ACCOUNT_LOGIN_BY_CODE_REQUIRED: ['password'] }, { kind })).paths as object);
    expect(paths).toContain('/_allauth/{client}/v1/auth/code/confirm');
    expect(paths).not.toContain('/_allauth/{client}/v1/auth/code/request');
  });
});
