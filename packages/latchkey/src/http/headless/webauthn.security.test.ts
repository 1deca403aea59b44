/**
 * Attacks on the headless WebAuthn routes, for both clients on every database: an answer from
 * another origin or for another relying party, a replayed answer, a ceremony begun in another
 * session, a cloned key whose counter went back, another user's key, an inactive account's
 * passkey, passkey login turned off, keys changed without a recent proof of identity or by
 * someone else's id, and malformed answers (never a 500).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { addWebauthnKeyFor } from '../../testing/mfa.js';
import { addKeyThroughApi, creationOptionsOf, proveKey, requestOptionsOf, testAuthenticator, WEBAUTHN_SETTINGS } from '../../testing/webauthn-headless.js';

const PASSWORD = 'a long enough passphrase';
const STALE_MS = 301 * 1000;
const REFUSED = [{ message: 'The security key could not be verified. Please try again.', code: 'incorrect_code', param: 'credential' }];

describe.each(testDatabaseKinds())('headless WebAuthn under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let bob: User;
  afterEach(() => latchkey.destroy());

  async function setUp(client: 'browser' | 'app', settings: Partial<SettingValues> = {}): Promise<HeadlessTestClient> {
    latchkey = await createTestLatchkey({ kind, settings: { ...WEBAUTHN_SETTINGS, ...settings } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  const sessionsOf = async (user: User) => latchkey.deps.sessions.listForUser(user.id);
  /** Signs out; an app drops its token, as allauth tells apps to. */
  async function signOut(api: HeadlessTestClient): Promise<void> {
    await api.delete('/auth/session');
    api.sessionToken = undefined;
  }
  const failures = async (user: User) => (await latchkey.deps.store.auditLog.listForUser(user.id, 100)).filter((record) => record.event === 'authentication_failed').map((record) => record.data.reason);

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('refuses a passkey answer from another origin, for another relying party, or without user verification', async () => {
      const api = await setUp(client);
      const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
      for (const overrides of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { userVerified: false }]) {
        const refused = await proveKey(api, '/auth/webauthn/login', authenticator, overrides);
        expect(refused.status).toBe(400);
        expect(refused.body.errors).toEqual(REFUSED);
      }
      expect(await sessionsOf(ada)).toEqual([]);
      expect((await proveKey(api, '/auth/webauthn/login', authenticator)).status).toBe(200);
    });

    it('refuses a replayed answer, an answer to another session\'s options, and options of another purpose', async () => {
      const api = await setUp(client);
      const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
      const options = requestOptionsOf(await api.get('/auth/webauthn/login'));
      const credential = authenticator.get(options);
      // The options were given to `api`: another client holds no ceremony to answer.
      const thief = api.another();
      await thief.get('/auth/webauthn/login');
      expect((await thief.post('/auth/webauthn/login', { credential })).body.errors).toEqual(REFUSED);
      expect((await api.post('/auth/webauthn/login', { credential })).status).toBe(200);
      await signOut(api);
      // The same answer again, even with new options of this client's, is a replay.
      await api.get('/auth/webauthn/login');
      expect((await api.post('/auth/webauthn/login', { credential })).body.errors).toEqual(REFUSED);
      // A reauthentication's options do not let a key sign in.
      expect((await proveKey(api, '/auth/webauthn/login', authenticator)).status).toBe(200);
      const reauthentication = requestOptionsOf(await api.get('/auth/webauthn/reauthenticate'));
      await signOut(api);
      expect((await api.post('/auth/webauthn/login', { credential: authenticator.get(reauthentication) })).status).toBe(400);
    });

    it('refuses a cloned key whose counter went back, and records it', async () => {
      const api = await setUp(client);
      const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
      expect((await proveKey(api, '/auth/webauthn/login', authenticator, { counter: 7 })).status).toBe(200);
      await signOut(api);
      const cloned = await proveKey(api, '/auth/webauthn/login', authenticator, { counter: 3 });
      expect(cloned.status).toBe(400);
      expect(cloned.body.errors).toEqual(REFUSED);
      expect(await failures(ada)).toContain('sign_count');
    });

    it("refuses another user's key at the second step, and never gives a stranger the user's options", async () => {
      const api = await setUp(client);
      const adas = await addWebauthnKeyFor(latchkey, ada, { passwordless: false });
      const bobs = await addWebauthnKeyFor(latchkey, bob, { passwordless: false });
      // Nobody's login waits here: no options naming anyone's keys.
      expect((await api.get('/auth/webauthn/authenticate')).status).toBe(401);
      await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      const options = requestOptionsOf(await api.get('/auth/webauthn/authenticate'));
      expect(options.allowCredentials?.map((descriptor) => descriptor.id)).toEqual([adas.credentialId]);
      const foreign = await api.post('/auth/webauthn/authenticate', { credential: bobs.authenticator.get(options, { credentialId: bobs.credentialId }) });
      expect(foreign.status).toBe(400);
      expect(foreign.body.errors).toEqual(REFUSED);
      expect(await sessionsOf(ada)).toEqual([]);
      expect((await proveKey(api, '/auth/webauthn/authenticate', adas.authenticator)).status).toBe(200);
    });

    it("turns a signed-in client into the passkey's user in a new session, carrying nothing of the old one", async () => {
      const api = await setUp(client);
      const { authenticator } = await addWebauthnKeyFor(latchkey, bob);
      await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(await sessionsOf(ada)).toHaveLength(1);
      const switched = await proveKey(api, '/auth/webauthn/login', authenticator);
      expect(switched.status).toBe(200);
      expect(switched.body.data.user).toMatchObject({ id: bob.id });
      expect(switched.body.data.methods).toEqual([expect.objectContaining({ method: 'mfa', type: 'webauthn', passwordless: true })]);
      expect(await sessionsOf(ada)).toEqual([]);
      expect(await sessionsOf(bob)).toHaveLength(1);
      expect((await api.get('/auth/session')).body.data.user).toMatchObject({ id: bob.id });
    });

    it('signs no inactive account in with its passkey', async () => {
      const api = await setUp(client);
      const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
      await latchkey.deps.store.users.update(ada.id, { isActive: false });
      const refused = await proveKey(api, '/auth/webauthn/login', authenticator);
      expect(refused.status).toBe(400);
      expect(refused.body.errors?.[0]?.code).toBe('account_inactive');
      expect(await sessionsOf(ada)).toEqual([]);
    });

    it('has no passkey login when it is off, and no WebAuthn route at all without security keys', async () => {
      let api = await setUp(client, { MFA_PASSKEY_LOGIN_ENABLED: false });
      expect((await api.get('/auth/webauthn/login')).status).toBe(404);
      expect((await api.post('/auth/webauthn/login', { credential: {} })).status).toBe(404);
      expect((await api.get('/auth/session')).body.data.flows).not.toContainEqual({ id: 'mfa_login_webauthn' });
      expect((await api.get('/config')).body.data.mfa.passkey_login_enabled).toBe(false);
      await latchkey.destroy();
      api = await setUp(client, { MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes'], MFA_PASSKEY_LOGIN_ENABLED: false });
      await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      for (const path of ['/auth/webauthn/authenticate', '/auth/webauthn/reauthenticate', '/auth/webauthn/login', '/auth/webauthn/signup', '/account/authenticators/webauthn']) {
        expect((await api.get(path)).status).toBe(404);
      }
    });

    it('asks for a recent proof of identity before a key is added, renamed or removed, and refuses an unverified account', async () => {
      // Optional verification, so that an account without a verified address can sign in at all.
      const api = await setUp(client, { ACCOUNT_EMAIL_VERIFICATION: 'optional' });
      await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      const authenticator = testAuthenticator();
      const key = await addKeyThroughApi(api, authenticator, { name: 'Laptop' });
      const creation = creationOptionsOf(await api.get('/account/authenticators/webauthn'));
      latchkey.clock.advance(STALE_MS);
      const requests = [
        () => api.get('/account/authenticators/webauthn'),
        () => api.post('/account/authenticators/webauthn', { credential: authenticator.create(creation) }),
        () => api.put('/account/authenticators/webauthn', { id: key.body.data.id, name: 'Renamed' }),
        () => api.delete('/account/authenticators/webauthn', { authenticators: [key.body.data.id] }),
      ];
      for (const request of requests) {
        const refused = await request();
        expect(refused.status).toBe(401);
        expect(refused.body.meta.is_authenticated).toBe(true);
        expect(refused.body.data.flows).toEqual([{ id: 'reauthenticate' }, { id: 'mfa_reauthenticate', types: ['webauthn', 'recovery_codes'] }]);
      }
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toHaveLength(2);

      const unverified = api.another();
      await createUser(latchkey.deps, { username: 'eve', email: 'eve@example.com', password: PASSWORD, emailVerified: false });
      await unverified.post('/auth/login', { username: 'eve', password: PASSWORD });
      expect((await unverified.get('/account/authenticators/webauthn')).status).toBe(409);
      expect((await unverified.post('/account/authenticators/webauthn', { credential: authenticator.create(creation) })).status).toBe(409);
    });

    it("cannot rename or remove another user's key, and answers malformed input with 400, never 500", async () => {
      const api = await setUp(client);
      const bobs = await addWebauthnKeyFor(latchkey, bob, { name: 'Bob key' });
      await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      const mine = await addKeyThroughApi(api, testAuthenticator());
      expect((await api.put('/account/authenticators/webauthn', { id: bobs.authenticatorId, name: 'Mine now' })).status).toBe(404);
      expect((await api.delete('/account/authenticators/webauthn', { authenticators: [mine.body.data.id, bobs.authenticatorId] })).status).toBe(404);
      expect(await latchkey.deps.store.authenticators.listForUser(bob.id)).toHaveLength(2);
      expect(await latchkey.deps.store.authenticators.findById(mine.body.data.id as number)).toBeDefined();

      const noContract = { validate: false };
      for (const credential of ['not json', '[]', 42, null, ['x'], { id: 7 }, { id: 'x', response: 'y' }]) {
        const answer = await api.post('/auth/webauthn/reauthenticate', { credential }, noContract);
        expect(answer.status).toBe(400);
        expect(answer.body.errors?.[0]?.param).toBe('credential');
      }
      expect((await api.post('/auth/webauthn/reauthenticate', {}, noContract)).status).toBe(400);
      for (const body of [{ id: 'one', name: 'x' }, { name: 'x' }, { id: mine.body.data.id, name: 'x'.repeat(65) }]) {
        expect((await api.put('/account/authenticators/webauthn', body, noContract)).status).toBe(400);
      }
      for (const body of [{}, { authenticators: 'all' }, { authenticators: [] }, { authenticators: [1.5] }]) {
        expect((await api.delete('/account/authenticators/webauthn', body, noContract)).status).toBe(400);
      }
    });
  });
});
