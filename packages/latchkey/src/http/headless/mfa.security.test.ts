/**
 * Races and clock drift on a second factor through the headless API: one TOTP code, or one
 * recovery code, sent by ten pending logins at once signs in exactly one of them; codes a minute
 * early or late are refused. (Sequential replay, lockout and the refusal of every protected route
 * after the password step alone are in mfa-authenticate.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, totpCodeAt, type ActivatedTotp } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
const PARALLEL = 10;

describe.each(testDatabaseKinds())('headless code replay on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  let app: Awaited<ReturnType<typeof HeadlessTestClient.createApp>>;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    // Wrong codes count against login_failed; ten parallel tries must not hit that limit first.
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_RATE_LIMITS: { login_failed: '100/m/ip,100/5m/key' } } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
    app = await HeadlessTestClient.createApp(latchkey);
  }

  /** `count` clients, each with a login waiting for its code. */
  async function pendingLogins(client: 'browser' | 'app', count: number): Promise<HeadlessTestClient[]> {
    const clients = Array.from({ length: count }, () => new HeadlessTestClient(app, client, latchkey));
    for (const api of clients) expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(401);
    return clients;
  }

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('one TOTP code sent by ten logins at once signs in exactly one', async () => {
      await setUp();
      const clients = await pendingLogins(client, PARALLEL);
      const code = totp.code();
      const statuses = (await Promise.all(clients.map((api) => api.post('/auth/2fa/authenticate', { code })))).map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 400)).toHaveLength(PARALLEL - 1);
      const signedIn = await Promise.all(clients.map(async (api) => (await api.get('/auth/session')).status));
      expect(signedIn.filter((status) => status === 200)).toHaveLength(1);
    });

    it('one recovery code sent by ten logins at once signs in exactly one, and is used up', async () => {
      await setUp();
      const clients = await pendingLogins(client, PARALLEL);
      const code = totp.recoveryCodes[3]!;
      const statuses = (await Promise.all(clients.map((api) => api.post('/auth/2fa/authenticate', { code })))).map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      const [late] = await pendingLogins(client, 1);
      expect((await late!.post('/auth/2fa/authenticate', { code })).body.errors).toEqual([{ message: 'Incorrect code.', code: 'incorrect_code', param: 'code' }]);
    });

    it('codes for a minute before and after now are refused; the current one works', async () => {
      await setUp();
      const [api] = await pendingLogins(client, 1);
      const at = latchkey.clock.now().getTime();
      for (const offset of [-60_000, 60_000]) {
        const response = await api!.post('/auth/2fa/authenticate', { code: totpCodeAt(latchkey.deps, totp.secret, new Date(at + offset)) });
        expect(response.status, `code for now ${offset > 0 ? '+' : ''}${offset / 1000} s`).toBe(400);
      }
      expect((await api!.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
    });
  });
});
