/**
 * Headless login by code (auth/code/request, auth/code/confirm) for both clients, every response
 * validated against allauth's published contract by the test client.
 */
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { observeAnswersAndMail } from '../../testing/answer-order.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { servedHeadlessDocument } from '../../testing/headless-openapi.js';

const PASSWORD = 'a long enough passphrase';
const INCORRECT = [{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }];

describe.each(testDatabaseKinds())('headless login by code on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    let api: HeadlessTestClient;
    let ada: User;

    async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
      latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_ENABLED: true, ...settings } });
      ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
    }

    /** The code in the last mail to `address`. */
    async function mailedCode(address = 'ada@example.com'): Promise<string> {
      await latchkey.deps.background.idle();
      const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
      if (code === undefined) throw new Error(`no code was mailed to ${address}`);
      return code;
    }

    const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');

    it('config says login by code is on, and the flows list it', async () => {
      await setUp();
      expect((await api.get('/config')).body.data.account.login_by_code_enabled).toBe(true);
      const session = await api.get('/auth/session');
      expect(session.body.data.flows).toContainEqual({ id: 'login_by_code' });
    });

    it('answers a known and an unknown address alike (401, login_by_code pending), mailing only the account', async () => {
      await setUp();
      const known = await api.post('/auth/code/request', { email: 'ada@example.com' });
      const unknown = await api.another().post('/auth/code/request', { email: 'nobody@example.com' });
      expect(known.status).toBe(401);
      expect(known.body.data.flows).toContainEqual({ id: 'login_by_code', is_pending: true });
      expect(unknown.status).toBe(401);
      expect(unknown.body.data).toEqual(known.body.data);
      await latchkey.deps.background.idle();
      expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    });

    it('sends its answer before the account is looked up and mailed, though the door still writes the session after the flow', async () => {
      latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_ENABLED: true } });
      await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      const order = observeAnswersAndMail(latchkey);
      const app = Fastify();
      app.addHook('onRequest', latchkey.allowedHostsGuard);
      app.addHook('onResponse', order.recordAnswer);
      await app.register(latchkey.plugin, { headless: true });
      await app.ready();
      try {
        const requested = await new HeadlessTestClient(app, client, latchkey).post('/auth/code/request', { email: 'ada@example.com' });
        expect(requested.status).toBe(401);
        // The mail is what only an existing account costs: started before the answer, it would slow that answer alone.
        expect(order.events.filter((event) => !event.startsWith('answered GET'))).toEqual([`answered POST /_allauth/${client}/v1/auth/code/request`, 'mail to ada@example.com']);
      } finally {
        await app.close();
      }
    });

    it('signs in with the mailed code, recorded as a code login, and the code works once', async () => {
      await setUp();
      await api.post('/auth/code/request', { email: 'ada@example.com' });
      const code = await mailedCode();
      const signedIn = await api.post('/auth/code/confirm', { code });
      expect(signedIn.status).toBe(200);
      expect(signedIn.body.data.user.id).toBe(ada.id);
      expect(signedIn.body.data.methods).toEqual([expect.objectContaining({ method: 'code', email: 'ada@example.com' })]);
      expect((await api.post('/auth/code/confirm', { code })).status).toBe(409);
    });

    it('refuses a wrong code with 400, and after MAX_ATTEMPTS the flow is no longer pending', async () => {
      await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 2 });
      await api.post('/auth/code/request', { email: 'ada@example.com' });
      const code = await mailedCode();
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const refused = await api.post('/auth/code/confirm', { code: wrongFor(code) });
        expect(refused.status).toBe(400);
        expect(refused.body.errors).toEqual(INCORRECT);
      }
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual({ id: 'login_by_code' });
      expect((await api.post('/auth/code/confirm', { code })).status).toBe(409);
    });

    it('binds the code to the client that asked for it', async () => {
      await setUp();
      await api.post('/auth/code/request', { email: 'ada@example.com' });
      const code = await mailedCode();
      const other = api.another();
      expect((await other.post('/auth/code/confirm', { code })).status).toBe(409);
      // Another client's request for the same address has its own code; the first one's does not fit it.
      await other.post('/auth/code/request', { email: 'ada@example.com' });
      expect(await mailedCode()).not.toBe(code);
      expect((await other.post('/auth/code/confirm', { code })).status).toBe(400);
      expect((await api.post('/auth/code/confirm', { code })).status).toBe(200);
    });

    it('answers 409 once the code has expired', async () => {
      await setUp({ ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180 });
      await api.post('/auth/code/request', { email: 'ada@example.com' });
      const code = await mailedCode();
      latchkey.clock.advance(180_000);
      expect((await api.post('/auth/code/confirm', { code })).status).toBe(409);
    });

    it('stops at mfa_authenticate after the code, then signs in with the second factor', async () => {
      await setUp();
      const totp = await activateTotpFor(latchkey, ada);
      await api.post('/auth/code/request', { email: 'ada@example.com' });
      const stopped = await api.post('/auth/code/confirm', { code: await mailedCode() });
      expect(stopped.status).toBe(401);
      expect(stopped.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
      const done = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(done.status).toBe(200);
      expect((done.body.data.methods as { method: string }[]).map((method) => method.method)).toEqual(['code', 'mfa']);
    });

    it('refuses what is not an address with 400', async () => {
      await setUp();
      const refused = await api.post('/auth/code/request', { email: 'not an address' });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ message: 'Enter a valid email address.', code: 'invalid', param: 'email' }]);
    });
  });

  it("describes the code routes in the served specification only where they exist", async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_ENABLED: true } });
    const paths = async (enabled: boolean) => Object.keys((await servedHeadlessDocument({ ACCOUNT_LOGIN_BY_CODE_ENABLED: enabled }, { kind })).paths as object);
    expect(await paths(true)).toEqual(expect.arrayContaining(['/_allauth/{client}/v1/auth/code/request', '/_allauth/{client}/v1/auth/code/confirm']));
    expect(await paths(false)).not.toContain('/_allauth/{client}/v1/auth/code/request');
  });

  it('is off by default: config says so and the routes do not exist', async () => {
    latchkey = await createTestLatchkey({ kind });
    const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'browser', latchkey);
    expect((await api.get('/config')).body.data.account.login_by_code_enabled).toBe(false);
    expect((await api.get('/auth/session')).body.data.flows).not.toContainEqual({ id: 'login_by_code' });
    expect((await api.post('/auth/code/request', { email: 'ada@example.com' })).status).toBe(404);
  });
});
