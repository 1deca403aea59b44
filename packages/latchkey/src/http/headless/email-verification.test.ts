import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
const INVALID = { message: 'This confirmation link is invalid or has expired.', code: 'invalid', param: 'key' };

describe.each(testDatabaseKinds())('headless email verification on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    let api: HeadlessTestClient;
    let ada: User;

    /** Ada has an account whose only address is unverified, so that mandatory verification stops her login. */
    async function setUp(verification: 'mandatory' | 'optional' = 'mandatory', loginOnConfirmation = false) {
      latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: verification, ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: loginOnConfirmation } });
      ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: false });
      api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
    }

    /** The key in the last confirmation link mailed to `address` (/accounts/confirm-email/<key>/). */
    function mailedKey(address: string): string {
      const match = /\/accounts\/confirm-email\/([^/\s]+)\//.exec(latchkey.mailer.lastTo(address)?.text ?? '');
      if (!match) throw new Error(`no confirmation link was mailed to ${address}`);
      return decodeURIComponent(match[1]!);
    }

    async function loginStoppedAtVerification() {
      const login = await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(login.status).toBe(401);
      expect(login.body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
      return mailedKey('ada@example.com');
    }

    const isVerified = async (email: string) => (await latchkey.deps.store.emailAddresses.listByEmail(email)).some((address) => address.verified);

    it('describes what a mailed key confirms, and whether this session is logging in with it', async () => {
      await setUp();
      const key = await loginStoppedAtVerification();
      const info = await api.get('/auth/email/verify', { headers: { 'x-email-verification-key': key } });
      expect(info.status).toBe(200);
      expect(info.body).toEqual({
        status: 200,
        data: { email: 'ada@example.com', user: { id: ada.id, display: 'ada', has_usable_password: true, email: 'ada@example.com', username: 'ada' } },
        meta: { is_authenticating: true },
      });
      expect(info.headers['cache-control']).toBe('no-store');
      const elsewhere = await api.another().get('/auth/email/verify', { headers: { 'x-email-verification-key': key } });
      expect(elsewhere.body.meta).toEqual({ is_authenticating: false });
      // Reading changes nothing: the address is still unverified.
      expect(await isVerified('ada@example.com')).toBe(false);
    });

    it('refuses a missing, forged or empty key with code invalid on the key', async () => {
      await setUp();
      for (const headers of [{}, { 'x-email-verification-key': 'not-a-key' }, { 'x-email-verification-key': '' }] as Record<string, string>[]) {
        const response = await api.get('/auth/email/verify', { headers });
        expect(response.status).toBe(400);
        expect(response.body).toEqual({ status: 400, errors: [INVALID] });
      }
    });

    it('refuses a key past ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS', async () => {
      await setUp();
      const key = await loginStoppedAtVerification();
      latchkey.clock.advance((latchkey.deps.settings.ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS * 86400 + 1) * 1000);
      expect((await api.get('/auth/email/verify', { headers: { 'x-email-verification-key': key } })).body.errors).toEqual([INVALID]);
      expect((await api.post('/auth/email/verify', { key })).body.errors).toEqual([INVALID]);
      expect(await isVerified('ada@example.com')).toBe(false);
    });

    it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION, verifies with the mailed key and carries the waiting login on to a session', async () => {
      await setUp('mandatory', true);
      const key = await loginStoppedAtVerification();
      const verified = await api.post('/auth/email/verify', { key });
      expect(verified.status).toBe(200);
      expect(verified.body.data.user).toMatchObject({ id: ada.id, username: 'ada' });
      expect(verified.body.meta.is_authenticated).toBe(true);
      if (client === 'app') expect(verified.body.meta.session_token).toEqual(expect.any(String));
      expect(await isVerified('ada@example.com')).toBe(true);
      expect((await api.get('/auth/session')).status).toBe(200);
      // The key worked once.
      const again = await api.another().post('/auth/email/verify', { key });
      expect(again.status).toBe(400);
      expect(again.body.errors).toEqual([INVALID]);
    });

    it('stops the carried-on login at the second factor when the account has one', async () => {
      await setUp('mandatory', true);
      const verifiedAda = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      await activateTotpFor(latchkey, verifiedAda);
      // Grace's address becomes unverified again (as after an import), so her login stops first at verification.
      const [address] = await latchkey.deps.store.emailAddresses.listForUser(verifiedAda.id);
      await latchkey.deps.store.emailAddresses.remove(address!.id);
      await latchkey.deps.store.emailAddresses.add({ userId: verifiedAda.id, email: 'grace@example.com', verified: false, primary: true });
      expect((await api.post('/auth/login', { username: 'grace', password: PASSWORD })).status).toBe(401);
      const verified = await api.post('/auth/email/verify', { key: mailedKey('grace@example.com') });
      expect(verified.status).toBe(401);
      expect(verified.body.data.flows).toContainEqual({ id: 'mfa_authenticate', is_pending: true, types: ['totp', 'recovery_codes'] });
      expect(verified.body.data.flows).not.toContainEqual(expect.objectContaining({ id: 'verify_email' }));
      expect((await api.get('/auth/session')).status).toBe(401);
    });

    it('verifies without signing in a session that was not logging in with that account', async () => {
      await setUp();
      const key = await loginStoppedAtVerification();
      const stranger = api.another();
      const response = await stranger.post('/auth/email/verify', { key });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ status: 401, data: { flows: [{ id: 'login' }, { id: 'signup' }] }, meta: { is_authenticated: false } });
      expect(await isVerified('ada@example.com')).toBe(true);
      expect((await stranger.get('/auth/session')).status).toBe(401);
    });

    it("ends a signup's pending verification once the mailed key verifies the address", async () => {
      await setUp();
      const signup = await api.post('/auth/signup', { username: 'grace', email: 'grace@example.com', password: PASSWORD });
      expect(signup.status).toBe(401);
      expect(signup.body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
      const response = await api.post('/auth/email/verify', { key: mailedKey('grace@example.com') });
      expect(response.status).toBe(401);
      expect(response.body.data.flows).toEqual([{ id: 'login' }, { id: 'signup' }]);
      expect((await api.get('/auth/session')).body.data.flows).toEqual([{ id: 'login' }, { id: 'signup' }]);
      expect(await isVerified('grace@example.com')).toBe(true);
      // Now the login passes the verification stage.
      expect((await api.post('/auth/login', { username: 'grace', password: PASSWORD })).status).toBe(200);
    });

    it('answers a signed-in user who verifies an added address with their session', async () => {
      await setUp('optional');
      expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
      expect((await api.post('/account/email', { email: 'second@example.com' })).status).toBe(200);
      const response = await api.post('/auth/email/verify', { key: mailedKey('second@example.com') });
      expect(response.status).toBe(200);
      expect(response.body.data.user).toMatchObject({ id: ada.id });
      expect(await isVerified('second@example.com')).toBe(true);
    });

    it('says so when another account verified the address meanwhile', async () => {
      await setUp('optional');
      await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      await api.post('/account/email', { email: 'shared@example.com' });
      const key = mailedKey('shared@example.com');
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      await latchkey.deps.store.emailAddresses.add({ userId: bob.id, email: 'shared@example.com', verified: true, primary: false });
      const response = await api.post('/auth/email/verify', { key });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ message: 'This email address has already been confirmed by another account.', code: 'email_taken', param: 'key' }]);
      expect((await latchkey.deps.store.emailAddresses.findForUser(ada.id, 'shared@example.com'))?.verified).toBe(false);
    });

    it('refuses a key that is missing or not a string', async () => {
      await setUp();
      for (const body of [{}, { key: 12 }, { key: ['a'] }, { key: null }, { key: { $ne: '' } }]) {
        const response = await api.post('/auth/email/verify', body);
        expect(response.status).toBe(400);
        expect(response.body.errors).toEqual([INVALID]);
      }
    });

    it('resends the link of a waiting login within the confirm_email limit', async () => {
      await setUp('mandatory', true);
      await loginStoppedAtVerification();
      // The login itself mailed a link a moment ago.
      const early = await api.post('/auth/email/verify/resend');
      expect(early.status).toBe(429);
      expect(early.headers['retry-after']).toBe('180');
      expect(latchkey.mailer.outbox).toHaveLength(1);
      latchkey.clock.advance(180 * 1000);
      const later = await api.post('/auth/email/verify/resend');
      expect(later.status).toBe(200);
      expect(later.body).toEqual({ status: 200 });
      expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com'], ['ada@example.com']]);
      // The new link works and finishes the login.
      expect((await api.post('/auth/email/verify', { key: mailedKey('ada@example.com') })).status).toBe(200);
    });

    it('answers 409 to a resend when no verification is pending', async () => {
      await setUp();
      const response = await api.post('/auth/email/verify/resend');
      expect(response.status).toBe(409);
      expect(response.body).toEqual({ status: 409 });
      expect(latchkey.mailer.outbox).toEqual([]);
    });

    if (client === 'app') {
      it('answers 410 to a session token that names no session', async () => {
        await setUp();
        const response = await api.post('/auth/email/verify/resend', undefined, { headers: { 'x-session-token': 'gone' } });
        expect(response.status).toBe(410);
        expect(response.body.meta).toEqual({ is_authenticated: false });
      });
    }
  });
});
