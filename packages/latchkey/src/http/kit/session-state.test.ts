/**
 * A new way in needs no login completion of its own. A stand-in for a provider's callback,
 * registered on Latchkey's scope as the social sign-in routes will be, proves a first factor that
 * is not a password and hands it to the pipeline (beginLogin) and to the one completion every door
 * shares (settleLogin). The login then stops at the code stage and finishes through the pages'
 * code form or the headless API, exactly as a password login does, and leaves the same records.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import { beginLogin } from '../../login/pipeline.js';
import type { FirstFactor } from '../../login/proofs.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';
import { presentLogin } from '../pages/login-outcome.js';
import type { HttpContext } from './context.js';
import { clientOf } from './request-info.js';
import { settleLogin } from './session-state.js';

const PROVIDER: FirstFactor = { kind: 'socialaccount', provider: 'openid_connect', uid: 'ada-at-the-idp' };
const CALLBACK = '/accounts/test-provider/login/callback/';

describe.each(testDatabaseKinds())('a first factor proven outside the login form, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(() => latchkey.destroy());

  /** The provider's callback: the provider has vouched for Ada; the pipeline and the completion do the rest. */
  function registerCallback(scope: FastifyInstance): void {
    scope.get(CALLBACK, async (request: FastifyRequest, reply: FastifyReply) => {
      const ctx: HttpContext = { deps: latchkey.deps, sessions: latchkey.requestSessions, client: 'browser' };
      const result = await beginLogin(latchkey.deps, ada, PROVIDER, { client: clientOf(request), canTrustBrowser: true });
      const outcome = await settleLogin(ctx, request, reply, result, { remember: false, next: '/welcome/' });
      return presentLogin(ctx, request, reply, outcome, '/welcome/');
    });
  }

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({ kind });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: 'a long enough passphrase', emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
  }

  async function loginsOf(user: User): Promise<unknown[]> {
    return (await latchkey.deps.store.auditLog.listForUser(user.id, 100)).filter((record) => record.event === 'user_logged_in').map((record) => record.data);
  }

  it('stops at the pages’ code form and signs in through it, recording the provider and the code', async () => {
    await setUp();
    const browser = await PageClient.create(latchkey, { plugin: { routes: registerCallback } });
    try {
      const back = await browser.get(CALLBACK);
      expect(back.statusCode).toBe(302);
      expect(back.headers.location).toBe('/accounts/2fa/authenticate/');
      expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
      expect((await browser.get('/accounts/2fa/authenticate/')).statusCode).toBe(200);

      latchkey.clock.advance(1000);
      const signedIn = await browser.post('/accounts/2fa/authenticate/', { code: totp.code() });
      expect(signedIn.statusCode).toBe(302);
      expect(signedIn.headers.location).toBe('/welcome/');
      const session = await latchkey.deps.sessions.load(browser.cookies.get('sessionid'));
      expect(session?.userId).toBe(ada.id);
      const at = latchkey.clock.now().getTime() / 1000;
      expect(session?.data._authentications).toEqual([
        { method: 'socialaccount', at, provider: 'openid_connect', uid: 'ada-at-the-idp', reauthenticated: false },
        { method: 'mfa', at, type: 'totp' },
      ]);
      expect(await loginsOf(ada)).toEqual([{ method: 'socialaccount+totp' }]);
      expect((await latchkey.deps.store.users.findById(ada.id))?.lastLogin).toEqual(latchkey.clock.now());
    } finally {
      await browser.close();
    }
  });

  it('carries on through the headless API in the same browser, in the contract’s shapes', async () => {
    await setUp();
    const pages = await PageClient.create(latchkey, { plugin: { headless: true, routes: registerCallback } });
    try {
      await pages.get(CALLBACK);
      const api = new HeadlessTestClient(pages.app, 'browser', latchkey);
      for (const [name, value] of pages.cookies) api.cookies.set(name, value);

      const waiting = await api.get('/auth/session');
      expect(waiting.status).toBe(401);
      expect(waiting.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });

      const signedIn = await api.post('/auth/2fa/authenticate', { code: totp.code() });
      expect(signedIn.status).toBe(200);
      const methods = signedIn.body.data.methods as { method: string }[];
      expect(methods.map((record) => record.method)).toEqual(['socialaccount', 'mfa']);
      expect(await loginsOf(ada)).toEqual([{ method: 'socialaccount+totp' }]);
    } finally {
      await pages.close();
    }
  });
});
