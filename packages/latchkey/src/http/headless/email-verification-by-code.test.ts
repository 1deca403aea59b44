/**
 * Email verification by code (ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED) through the headless
 * API, both clients, every response validated against allauth's published contract by the test
 * client: auth/email/verify takes the mailed code as its `key`, for the login waiting at
 * verify_email (which it signs in) and for an address the signed-in user added.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
const INCORRECT = [{ message: 'Incorrect code.', code: 'incorrect_code', param: 'key' }];
const VERIFY_PENDING = { id: 'verify_email', is_pending: true };
const SIGNED_OUT_FLOWS = [{ id: 'login' }, { id: 'signup' }];

describe.each(testDatabaseKinds())('headless email verification by code on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    let api: HeadlessTestClient;

    async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
      latchkey = await createTestLatchkey({
        kind,
        settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true, ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: false, ...settings },
      });
      api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
    }

    function mailedCode(address = 'grace@example.com'): string {
      const mail = latchkey.mailer.lastTo(address);
      const code = /\n([A-Z0-9]{6})\n/.exec(mail?.text ?? '')?.[1];
      if (code === undefined) throw new Error(`no code was mailed to ${address}`);
      return code;
    }

    const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
    const isVerified = async (email: string) => (await latchkey.deps.store.emailAddresses.listByEmail(email)).some((address) => address.verified);

    async function signUp(as: HeadlessTestClient = api, email = 'grace@example.com') {
      const signup = await as.post('/auth/signup', { username: email.split('@')[0]!, email, password: PASSWORD });
      expect(signup.status).toBe(401);
      expect(signup.body.data.flows).toContainEqual(VERIFY_PENDING);
      return signup;
    }

    it('config says so; the signup mails a code, not a link, and the code signs the person in from this session', async () => {
      await setUp();
      expect((await api.get('/config')).body.data.account.email_verification_by_code_enabled).toBe(true);
      await signUp();
      const mail = latchkey.mailer.lastTo('grace@example.com')!;
      expect(mail.text).not.toContain('/accounts/confirm-email/');
      const code = mailedCode();
      const looked = await api.get('/auth/email/verify', { headers: { 'x-email-verification-key': code } });
      expect(looked.status).toBe(200);
      expect(looked.body.data).toMatchObject({ email: 'grace@example.com', user: { username: 'grace' } });
      expect(looked.body.meta).toEqual({ is_authenticating: true });
      const wrong = await api.post('/auth/email/verify', { key: wrongFor(code) });
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors).toEqual(INCORRECT);
      // ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION is off, yet a code proves this very session: allauth signs in.
      const verified = await api.post('/auth/email/verify', { key: code.toLowerCase() });
      expect(verified.status).toBe(200);
      expect(verified.body.data.user).toMatchObject({ username: 'grace', email: 'grace@example.com' });
      if (client === 'app') expect(verified.body.meta.session_token).toEqual(expect.any(String));
      expect(await isVerified('grace@example.com')).toBe(true);
    });

    it('uses a code once: after the sign-in nothing is pending (409)', async () => {
      await setUp();
      await signUp();
      const code = mailedCode();
      expect((await api.post('/auth/email/verify', { key: code })).status).toBe(200);
      expect((await api.post('/auth/email/verify', { key: code })).status).toBe(409);
    });

    it('after MAX_ATTEMPTS wrong codes even the right one fails: the login ends', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 2 });
      await signUp();
      const code = mailedCode();
      for (let attempt = 0; attempt < 2; attempt += 1) expect((await api.post('/auth/email/verify', { key: wrongFor(code) })).body.errors).toEqual(INCORRECT);
      const late = await api.post('/auth/email/verify', { key: code });
      expect(late.status).toBe(401);
      expect(late.body.data.flows).toEqual(SIGNED_OUT_FLOWS);
      expect(await isVerified('grace@example.com')).toBe(false);
      // Signing in again (past the confirm_email limit's window) mails a new code, which works.
      latchkey.clock.advance(181_000);
      const login = await api.post('/auth/login', { username: 'grace', password: PASSWORD });
      expect(login.body.data.flows).toContainEqual(VERIFY_PENDING);
      expect((await api.post('/auth/email/verify', { key: mailedCode() })).status).toBe(200);
    });

    it('refuses the code from another session (409), and it still works where it was asked for', async () => {
      await setUp();
      await signUp();
      const code = mailedCode();
      const other = api.another();
      expect((await other.post('/auth/email/verify', { key: code })).status).toBe(409);
      expect((await other.get('/auth/email/verify', { headers: { 'x-email-verification-key': code } })).status).toBe(409);
      expect((await api.post('/auth/email/verify', { key: code })).status).toBe(200);
    });

    it('refuses a code after ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT: the login ends', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT: 300 });
      await signUp();
      latchkey.clock.advance(300_000);
      const late = await api.post('/auth/email/verify', { key: mailedCode() });
      expect(late.status).toBe(401);
      expect(late.body.data.flows).toEqual(SIGNED_OUT_FLOWS);
    });

    it('resends a new code in place of the old one', async () => {
      await setUp();
      await signUp();
      const first = mailedCode();
      // Within the confirm_email limit's window (one mail per address in 3 minutes): 429.
      expect((await api.post('/auth/email/verify/resend')).status).toBe(429);
      latchkey.clock.advance(181_000);
      expect((await api.post('/auth/email/verify/resend')).status).toBe(200);
      const second = mailedCode();
      expect(second).not.toBe(first);
      if (first !== second) expect((await api.post('/auth/email/verify', { key: first })).body.errors).toEqual(INCORRECT);
      expect((await api.post('/auth/email/verify', { key: second })).status).toBe(200);
      expect((await api.another().post('/auth/email/verify/resend')).status).toBe(409);
    });

    it('verifies an address the signed-in user added, by the code mailed to it, in their session only', async () => {
      await setUp();
      const ada: User = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
      expect((await api.post('/account/email', { email: 'second@example.com' })).status).toBe(200);
      const code = mailedCode('second@example.com');
      const looked = await api.get('/auth/email/verify', { headers: { 'x-email-verification-key': code } });
      expect(looked.body.meta).toEqual({ is_authenticating: false });
      expect(looked.body.data.email).toBe('second@example.com');
      const verified = await api.post('/auth/email/verify', { key: code });
      expect(verified.status).toBe(200);
      expect(verified.body.data.user.id).toBe(ada.id);
      expect(await isVerified('second@example.com')).toBe(true);
      expect((await api.get('/account/email')).body.data).toContainEqual({ email: 'second@example.com', primary: false, verified: true });
      expect((await api.post('/auth/email/verify', { key: code })).status).toBe(409);
    });

    it('asks a TOTP user for the second factor after the code', async () => {
      await setUp();
      const ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      const totp = await activateTotpFor(latchkey, ada);
      await latchkey.database.kysely.updateTable('latchkey_email_addresses').set({ verified: 0 }).where('user_id', '=', ada.id).execute();
      const login = await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(login.body.data.flows).toContainEqual(VERIFY_PENDING);
      const afterCode = await api.post('/auth/email/verify', { key: mailedCode('ada@example.com') });
      expect(afterCode.status).toBe(401);
      expect(afterCode.body.data.flows).toContainEqual(expect.objectContaining({ id: 'mfa_authenticate', is_pending: true }));
      expect((await api.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
    });

    it('answers a signup with an address that already has an account exactly as a new one, through to the end of its code', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 2 });
      await createUser(latchkey.deps, { username: 'owner', email: 'taken@example.com', password: PASSWORD, emailVerified: true });
      const answers = async (as: HeadlessTestClient, email: string, wrong: () => string) => {
        const signup = await signUp(as, email);
        const steps: unknown[] = [signup.body.data];
        for (let attempt = 0; attempt < 2; attempt += 1) {
          const refused = await as.post('/auth/email/verify', { key: wrong() });
          steps.push({ status: refused.status, errors: refused.body.errors });
        }
        latchkey.clock.advance(181_000);
        steps.push({ status: (await as.post('/auth/email/verify/resend')).status });
        for (let attempt = 0; attempt < 3; attempt += 1) {
          const refused = await as.post('/auth/email/verify', { key: wrong() });
          steps.push({ status: refused.status, flows: refused.body.data?.flows, errors: refused.body.errors });
        }
        return steps;
      };
      const fresh = await answers(api, 'grace@example.com', () => wrongFor(mailedCode('grace@example.com')));
      // An address with an account gets no code at all: any guess is as wrong as the fresh one's.
      const taken = await answers(api.another(), 'taken@example.com', () => 'AAAAAA');
      expect(taken).toEqual(fresh);
      expect(fresh.at(-1)).toEqual({ status: 401, flows: SIGNED_OUT_FLOWS, errors: undefined });
    });
  });
});
