import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';
const FRONT_END = {
  account_confirm_email: 'https://app.example.com/verify-email/{key}',
  account_reset_password_from_key: 'https://app.example.com/password/reset/{key}',
};

describe.each(testDatabaseKinds())('HEADLESS_ONLY on %s', (kind) => {
  let latchkey: TestLatchkey | undefined;
  afterEach(async () => {
    await latchkey?.destroy();
    latchkey = undefined;
  });

  async function setUp(headlessOnly: boolean): Promise<FastifyInstance> {
    latchkey = await createTestLatchkey({ kind, settings: { HEADLESS_ONLY: headlessOnly, HEADLESS_FRONTEND_URLS: FRONT_END } });
    return HeadlessTestClient.createApp(latchkey);
  }

  const PAGES = ['/accounts/login/', '/accounts/signup/', '/accounts/logout/', '/accounts/email/', '/accounts/password/reset/', '/accounts/confirm-email/some-key/', '/accounts/password/reset/key/1-abc-key/', '/accounts/2fa/', '/accounts/sessions/'];

  it('answers 404 for every account page, to GET and POST alike, and keeps the stylesheet', async () => {
    const app = await setUp(true);
    for (const url of PAGES) {
      expect((await app.inject({ url, headers: { host: 'testserver' } })).statusCode, url).toBe(404);
      expect((await app.inject({ method: 'POST', url, headers: { host: 'testserver' }, payload: { login: 'ada', password: PASSWORD } })).statusCode, url).toBe(404);
    }
    expect((await app.inject({ url: '/static/latchkey/latchkey.css', headers: { host: 'testserver' } })).statusCode).toBe(200);
  });

  it('keeps the headless API, whose emails lead to the front end: signup, confirmation and login work there', async () => {
    const app = await setUp(true);
    const api = new HeadlessTestClient(app, 'browser', latchkey!);
    const signup = await api.post('/auth/signup', { username: 'ada', email: 'ada@example.com', password: PASSWORD });
    expect(signup.status).toBe(401);
    const mail = latchkey!.mailer.lastTo('ada@example.com');
    expect(mail?.text).not.toContain('/accounts/');
    const key = /https:\/\/app\.example\.com\/verify-email\/(\S+)/.exec(mail?.text ?? '')?.[1];
    expect(key).toBeDefined();
    // Confirming proves the address; the person then signs in with their password.
    expect((await api.post('/auth/email/verify', { key: decodeURIComponent(key!) })).status).toBe(401);
    expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
    expect((await api.get('/auth/session')).body.data.user).toMatchObject({ username: 'ada', email: 'ada@example.com' });
  });

  it('leaves the pages on when it is off', async () => {
    const app = await setUp(false);
    for (const url of ['/accounts/login/', '/accounts/signup/']) expect((await app.inject({ url, headers: { host: 'testserver' } })).statusCode, url).toBe(200);
  });

  it('refuses to start without the front-end routes that replace the pages', async () => {
    await expect(createTestLatchkey({ kind, settings: { HEADLESS_ONLY: true } })).rejects.toThrow(
      'LATCHKEY_HEADLESS_ONLY=true needs LATCHKEY_HEADLESS_FRONTEND_URLS to name account_confirm_email and account_reset_password_from_key',
    );
  });

  it('refuses to mount without the headless API, which would leave no way to sign in', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { HEADLESS_ONLY: true, HEADLESS_FRONTEND_URLS: FRONT_END } });
    const app = Fastify();
    await expect(app.register(latchkey.plugin).ready()).rejects.toThrow('HEADLESS_ONLY is true but the headless API is not registered');
    await app.close();
  });
});
