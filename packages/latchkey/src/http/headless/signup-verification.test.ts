import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';
const SIGNED_OUT_FLOWS = [{ id: 'login' }, { id: 'signup' }];

/**
 * A signup under mandatory verification leaves its login waiting at verify_email, as a password
 * login does, and ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION decides whether confirming the address in
 * that session signs the person in. Every response is checked against the headless contract by
 * HeadlessTestClient.
 */
describe.each(testDatabaseKinds())('headless signup and login on email confirmation on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    let api: HeadlessTestClient;

    async function setUp(loginOnConfirmation: boolean) {
      latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: loginOnConfirmation } });
      api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
    }

    function mailedKey(address: string): string {
      const match = /\/accounts\/confirm-email\/([^/\s]+)\//.exec(latchkey.mailer.lastTo(address)?.text ?? '');
      if (!match) throw new Error(`no confirmation link was mailed to ${address}`);
      return decodeURIComponent(match[1]!);
    }

    async function signUp(as: HeadlessTestClient = api) {
      const signup = await as.post('/auth/signup', { username: 'grace', email: 'grace@example.com', password: PASSWORD });
      expect(signup.status).toBe(401);
      return signup;
    }

    const isVerified = async (email: string) => (await latchkey.deps.store.emailAddresses.listByEmail(email)).some((address) => address.verified);

    it('leaves the signup waiting at verify_email, so the key is read as authenticating in this session only', async () => {
      await setUp(false);
      const signup = await signUp();
      expect(signup.body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
      // One mail: the signup sent the link, and its login did not send it a second time.
      expect(latchkey.mailer.outbox).toHaveLength(1);
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
      const key = mailedKey('grace@example.com');
      const here = await api.get('/auth/email/verify', { headers: { 'x-email-verification-key': key } });
      expect(here.body.meta).toEqual({ is_authenticating: true });
      const elsewhere = await api.another().get('/auth/email/verify', { headers: { 'x-email-verification-key': key } });
      expect(elsewhere.body.meta).toEqual({ is_authenticating: false });
    });

    it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION off, confirming after signup only verifies; the person signs in themselves', async () => {
      await setUp(false);
      await signUp();
      const verified = await api.post('/auth/email/verify', { key: mailedKey('grace@example.com') });
      expect(verified.status).toBe(401);
      expect(verified.body.data.flows).toEqual(SIGNED_OUT_FLOWS);
      expect(await isVerified('grace@example.com')).toBe(true);
      expect((await api.get('/auth/session')).body.data.flows).toEqual(SIGNED_OUT_FLOWS);
      expect((await api.post('/auth/login', { username: 'grace', password: PASSWORD })).status).toBe(200);
    });

    it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION on, confirming after signup in the same session signs the person in', async () => {
      await setUp(true);
      await signUp();
      const verified = await api.post('/auth/email/verify', { key: mailedKey('grace@example.com') });
      expect(verified.status).toBe(200);
      expect(verified.body.data.user).toMatchObject({ username: 'grace', email: 'grace@example.com' });
      expect(verified.body.meta.is_authenticated).toBe(true);
      if (client === 'app') expect(verified.body.meta.session_token).toEqual(expect.any(String));
      expect((await api.get('/auth/session')).status).toBe(200);
    });

    it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION on, a confirmation in another session signs nobody in', async () => {
      await setUp(true);
      await signUp();
      const stranger = api.another();
      const response = await stranger.post('/auth/email/verify', { key: mailedKey('grace@example.com') });
      expect(response.status).toBe(401);
      expect(response.body.data.flows).toEqual(SIGNED_OUT_FLOWS);
      expect(await isVerified('grace@example.com')).toBe(true);
      expect((await stranger.get('/auth/session')).status).toBe(401);
      expect((await api.get('/auth/session')).status).toBe(401);
    });

    it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION off, confirming after a password login ends the waiting login without a session', async () => {
      await setUp(false);
      await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: false });
      expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(401);
      const verified = await api.post('/auth/email/verify', { key: mailedKey('ada@example.com') });
      expect(verified.status).toBe(401);
      expect(verified.body.data.flows).toEqual(SIGNED_OUT_FLOWS);
      expect(await isVerified('ada@example.com')).toBe(true);
    });

    it('answers a signup for an address that has an account exactly as a new one, resends included', async () => {
      await setUp(true);
      await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      const fresh = api.another();
      const newAccount = await fresh.post('/auth/signup', { username: 'grace', email: 'grace@example.com', password: PASSWORD });
      const taken = await api.post('/auth/signup', { username: 'other', email: 'ada@example.com', password: PASSWORD });
      expect(taken.status).toBe(newAccount.status);
      expect({ ...taken.body, meta: { ...taken.body.meta, session_token: 'x' } }).toEqual({ ...newAccount.body, meta: { ...newAccount.body.meta, session_token: 'x' } });
      // Both mails were sent a moment ago: the same confirm_email limit answers both resends.
      const [takenResend, newResend] = [await api.post('/auth/email/verify/resend'), await fresh.post('/auth/email/verify/resend')];
      expect([takenResend.status, newResend.status]).toEqual([429, 429]);
      latchkey.clock.advance(180 * 1000);
      const [takenLater, newLater] = [await api.post('/auth/email/verify/resend'), await fresh.post('/auth/email/verify/resend')];
      expect([takenLater.body, newLater.body]).toEqual([{ status: 200 }, { status: 200 }]);
      // Only the new account's link was mailed again; the owner of the taken address was told once.
      expect(latchkey.mailer.outbox.filter((mail) => mail.to.includes('ada@example.com'))).toHaveLength(1);
    });
  });
});
