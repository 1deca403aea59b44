/**
 * Passkeys and security keys through the headless API, for both clients on every database, with a
 * software authenticator answering as a browser would: adding, listing, renaming and removing keys
 * (account/authenticators/webauthn), a key at a login's second step (auth/webauthn/authenticate),
 * reauthentication with a key (auth/webauthn/reauthenticate) and passkey login
 * (auth/webauthn/login). Every response is checked against allauth's contract by the test client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { addWebauthnKeyFor } from '../../testing/mfa.js';
import { creationOptionsOf, proveKey, requestOptionsOf, testAuthenticator, WEBAUTHN_SETTINGS } from '../../testing/webauthn-headless.js';

const PASSWORD = 'a long enough passphrase';
/** Past the five minutes within which a login counts as a recent proof of identity. */
const STALE_MS = 301 * 1000;

describe.each(testDatabaseKinds())('headless passkeys and security keys on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(client: 'browser' | 'app', settings: Partial<SettingValues> = {}): Promise<HeadlessTestClient> {
    latchkey = await createTestLatchkey({ kind, settings: { ...WEBAUTHN_SETTINGS, ...settings } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  const now = () => latchkey.clock.now().getTime() / 1000;
  const signIn = async (api: HeadlessTestClient) => expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('tells the front end that passkeys sign in, and offers the passkey login flow', async () => {
      const api = await setUp(client);
      const config = await api.get('/config');
      expect(config.body.data.mfa).toEqual({ supported_types: ['totp', 'recovery_codes', 'webauthn'], passkey_login_enabled: true });
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual({ id: 'mfa_login_webauthn' });
    });

    it('adds a passkey (with recovery codes) and a security key, lists, renames and removes them', async () => {
      const api = await setUp(client);
      await signIn(api);
      const authenticator = testAuthenticator();
      const passkeyOptions = creationOptionsOf(await api.get('/account/authenticators/webauthn?passwordless'));
      expect(passkeyOptions.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
      expect(passkeyOptions.rp).toEqual({ id: 'testserver', name: 'Test Site' });
      const tokenBefore = api.sessionToken;
      const first = await api.post('/account/authenticators/webauthn', { name: 'Laptop', credential: authenticator.create(passkeyOptions) });
      expect(first.status).toBe(200);
      expect(first.body.data).toEqual({ type: 'webauthn', id: expect.any(Number), name: 'Laptop', is_passwordless: true, created_at: now(), last_used_at: null });
      expect(first.body.meta).toMatchObject({ recovery_codes_generated: true });
      // A new factor is a change of privilege: an app is handed a new session token.
      if (client === 'app') expect(api.sessionToken).not.toBe(tokenBefore);

      const keyOptions = creationOptionsOf(await api.get('/account/authenticators/webauthn'));
      expect(keyOptions.authenticatorSelection).toMatchObject({ residentKey: 'discouraged' });
      expect(keyOptions.excludeCredentials).toHaveLength(1);
      const second = await api.post('/account/authenticators/webauthn', { credential: authenticator.create(keyOptions) });
      expect(second.body.data).toMatchObject({ name: 'Security key', is_passwordless: false });
      expect(second.body.meta).toMatchObject({ recovery_codes_generated: false });

      const listed = (await api.get('/account/authenticators')).body.data as { type: string; id?: number }[];
      expect(listed.map((entry) => entry.type)).toEqual(['recovery_codes', 'webauthn', 'webauthn']);
      const renamed = await api.put('/account/authenticators/webauthn', { id: second.body.data.id, name: '  YubiKey  ' });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({ id: second.body.data.id, name: 'YubiKey' });

      const removed = await api.delete('/account/authenticators/webauthn', { authenticators: [first.body.data.id, second.body.data.id] });
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ status: 200 });
      // With no second factor left, the recovery codes go too.
      expect((await api.get('/account/authenticators')).body.data).toEqual([]);
    });

    it('asks a password login with a security key for it: mfa_authenticate lists webauthn, the key signs in', async () => {
      const api = await setUp(client);
      const { authenticator } = await addWebauthnKeyFor(latchkey, ada, { passwordless: false });
      const first = await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(first.status).toBe(401);
      expect(first.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['webauthn', 'recovery_codes'] });
      const options = await api.get('/auth/webauthn/authenticate');
      expect(requestOptionsOf(options).allowCredentials).toHaveLength(1);
      const done = await api.post('/auth/webauthn/authenticate', { credential: authenticator.get(requestOptionsOf(options)) });
      expect(done.status).toBe(200);
      expect(done.body.data.user).toMatchObject({ id: ada.id });
      expect(done.body.data.methods).toEqual([
        { method: 'password', at: now(), username: 'ada' },
        { method: 'mfa', at: now(), type: 'webauthn' },
      ]);
      // The login is over: the step has nothing left to finish.
      expect((await api.get('/auth/webauthn/authenticate')).status).toBe(401);
    });

    it('reauthenticates with a key: mfa_reauthenticate lists webauthn, and the proof is renewed', async () => {
      const api = await setUp(client);
      const { authenticator } = await addWebauthnKeyFor(latchkey, ada, { passwordless: false });
      await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      await proveKey(api, '/auth/webauthn/authenticate', authenticator);
      latchkey.clock.advance(STALE_MS);
      const stale = await api.get('/account/authenticators/recovery-codes');
      expect(stale.status).toBe(401);
      expect(stale.body.data.flows).toEqual([{ id: 'reauthenticate' }, { id: 'mfa_reauthenticate', types: ['webauthn', 'recovery_codes'] }]);
      const renewed = await proveKey(api, '/auth/webauthn/reauthenticate', authenticator);
      expect(renewed.status).toBe(200);
      expect((renewed.body.data.methods as unknown[]).at(-1)).toEqual({ method: 'mfa', at: now(), type: 'webauthn', reauthenticated: true });
      expect((await api.get('/account/authenticators/recovery-codes')).status).toBe(200);
    });

    it('signs in with a passkey alone, as both factors; an unverified address waits at verify_email', async () => {
      const api = await setUp(client, { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
      const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
      const options = await api.get('/auth/webauthn/login');
      expect(options.status).toBe(200);
      expect(requestOptionsOf(options)).toMatchObject({ rpId: 'testserver', allowCredentials: [], userVerification: 'required' });
      // The app is given the session the ceremony is kept in.
      if (client === 'app') expect(options.body.meta.session_token).toEqual(expect.any(String));
      const done = await api.post('/auth/webauthn/login', { credential: authenticator.get(requestOptionsOf(options)) });
      expect(done.status).toBe(200);
      expect(done.body.data.user).toMatchObject({ id: ada.id });
      expect(done.body.data.methods).toEqual([{ method: 'mfa', at: now(), type: 'webauthn', passwordless: true }]);
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toHaveLength(1);

      // Grace added her passkey, then swapped her address for one not verified yet.
      const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      const graces = testAuthenticator();
      await addWebauthnKeyFor(latchkey, grace, { authenticator: graces });
      await latchkey.deps.store.emailAddresses.remove((await latchkey.deps.store.emailAddresses.listForUser(grace.id))[0]!.id);
      await latchkey.deps.store.emailAddresses.add({ userId: grace.id, email: 'grace@example.org', verified: false, primary: true });
      const waiting = await proveKey(api.another(), '/auth/webauthn/login', graces);
      expect(waiting.status).toBe(401);
      expect(waiting.body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
    });
  });
});
