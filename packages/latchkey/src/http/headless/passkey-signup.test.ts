/**
 * Passkey signup through the headless API (auth/webauthn/signup, MFA_PASSKEY_SIGNUP_ENABLED), for
 * both clients on every database, every response checked against allauth's contract: the form
 * without a password, the address verified by the mailed code, the passkey's creation options and
 * the passkey, which signs in; then a passkey login with the same authenticator. And its refusals:
 * a taken address answered alike, nothing pending (409), a signed-in client (409), a bad passkey
 * (400, the signup still waiting), the setting off (404).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient, type HeadlessResponse } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { creationOptionsOf, proveKey, testAuthenticator, WEBAUTHN_SETTINGS } from '../../testing/webauthn-headless.js';

const PASSWORD = 'a long enough passphrase';
const PASSKEY_SIGNUP: Partial<SettingValues> = {
  ...WEBAUTHN_SETTINGS,
  MFA_PASSKEY_SIGNUP_ENABLED: true,
  ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true,
};
const VERIFY_PENDING = { id: 'verify_email', is_pending: true };
const PASSKEY_PENDING = { id: 'mfa_signup_webauthn', is_pending: true };

describe.each(testDatabaseKinds())('headless passkey signup on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(client: 'browser' | 'app', settings: Partial<SettingValues> = {}): Promise<HeadlessTestClient> {
    latchkey = await createTestLatchkey({ kind, settings: { ...PASSKEY_SIGNUP, ...settings } });
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  /** The verification code the last mail to `address` carried. */
  function mailedCode(address: string): string {
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
    if (code === undefined) throw new Error(`no code was mailed to ${address}`);
    return code;
  }

  const pendingFlows = (response: HeadlessResponse) => (response.body.data.flows as { is_pending?: boolean }[]).filter((flow) => flow.is_pending);

  /** Steps 1 and 2: the form, then the mailed code; the signup then waits for its passkey. */
  async function signUpUntilPasskey(api: HeadlessTestClient, email = 'grace@example.com'): Promise<void> {
    const begun = await api.post('/auth/webauthn/signup', { email, username: email.split('@')[0] });
    expect(begun.status).toBe(401);
    expect(pendingFlows(begun)).toEqual([VERIFY_PENDING]);
    const verified = await api.post('/auth/email/verify', { key: mailedCode(email) });
    expect(verified.status).toBe(401);
    expect(pendingFlows(verified)).toEqual([PASSKEY_PENDING]);
  }

  const now = () => latchkey.clock.now().getTime() / 1000;

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('signs up with an address and a passkey, then signs in with the passkey alone', async () => {
      const api = await setUp(client);
      await signUpUntilPasskey(api);
      const grace = (await latchkey.deps.store.users.findByUsername('grace'))!;
      const options = await api.get('/auth/webauthn/signup');
      expect(options.status).toBe(200);
      const creation = creationOptionsOf(options);
      expect(creation.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
      expect(creation.user.name).toBe('grace');

      const authenticator = testAuthenticator();
      const done = await api.put('/auth/webauthn/signup', { name: 'Phone', credential: authenticator.create(creation) });
      expect(done.status).toBe(200);
      expect(done.body.meta.is_authenticated).toBe(true);
      expect(done.body.data.user).toMatchObject({ id: grace.id, username: 'grace', email: 'grace@example.com', has_usable_password: false });
      expect(done.body.data.methods).toEqual([{ method: 'mfa', at: now(), type: 'webauthn', passwordless: true }]);
      const listed = (await api.get('/account/authenticators')).body.data as unknown[];
      expect(listed).toEqual([expect.objectContaining({ type: 'webauthn', name: 'Phone', is_passwordless: true })]);
      // The signup is over: nothing is pending any more.
      expect((await api.get('/auth/webauthn/signup')).status).toBe(409);

      await api.delete('/auth/session');
      const again = api.another();
      const login = await proveKey(again, '/auth/webauthn/login', authenticator);
      expect(login.status).toBe(200);
      expect(login.body.data.user).toMatchObject({ id: grace.id });
    });

    it('keeps the signup waiting after a bad passkey, and takes a good one after', async () => {
      const api = await setUp(client);
      await signUpUntilPasskey(api);
      const authenticator = testAuthenticator();
      for (const overrides of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { userVerified: false }]) {
        const refused = await api.put('/auth/webauthn/signup', { credential: authenticator.create(creationOptionsOf(await api.get('/auth/webauthn/signup')), overrides) });
        expect(refused.status).toBe(400);
        expect(refused.body.errors?.[0]).toMatchObject({ code: 'incorrect_code', param: 'credential' });
      }
      // An answer to options this session never asked for (another client's) is refused too.
      const other = api.another();
      const stolen = authenticator.create(creationOptionsOf(await api.get('/auth/webauthn/signup')));
      expect((await other.put('/auth/webauthn/signup', { credential: stolen })).status).toBe(409);
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual(PASSKEY_PENDING);
      const done = await api.put('/auth/webauthn/signup', { credential: stolen });
      expect(done.status).toBe(200);
      expect((await api.get('/account/authenticators')).body.data).toEqual([expect.objectContaining({ name: 'Passkey' })]);
    });

    it('answers a taken address like a new one and mails its owner; refuses when nothing is pending or someone is signed in', async () => {
      const api = await setUp(client);
      await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      expect((await api.get('/auth/webauthn/signup')).status).toBe(409);
      expect((await api.put('/auth/webauthn/signup', { credential: {} })).status).toBe(409);
      const taken = await api.post('/auth/webauthn/signup', { email: 'ada@example.com', username: 'someone' });
      expect(taken.status).toBe(401);
      expect(taken.body.data.flows).toContainEqual(VERIFY_PENDING);
      expect(latchkey.mailer.lastTo('ada@example.com')?.subject).toMatch(/already/i);
      expect((await api.post('/auth/webauthn/signup', { email: 'not an address', username: 'x' })).status).toBe(400);

      const ada = api.another();
      expect((await ada.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
      expect((await ada.post('/auth/webauthn/signup', { email: 'new@example.com', username: 'new' })).status).toBe(409);
    });

    it('is closed with signup, and not there without MFA_PASSKEY_SIGNUP_ENABLED', async () => {
      let api = await setUp(client);
      latchkey.deps.adapter.isOpenForSignup = () => Promise.resolve(false);
      expect((await api.post('/auth/webauthn/signup', { email: 'grace@example.com', username: 'grace' })).status).toBe(403);
      await latchkey.destroy();
      api = await setUp(client, { MFA_PASSKEY_SIGNUP_ENABLED: false });
      expect((await api.post('/auth/webauthn/signup', { email: 'grace@example.com', username: 'grace' })).status).toBe(404);
      expect((await api.get('/auth/webauthn/signup')).status).toBe(404);
    });
  });
});
