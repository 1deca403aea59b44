import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';
const NOT_YOURS = { message: 'Select one of your email addresses.', code: 'not_found', param: 'email' };

describe.each(testDatabaseKinds())('headless email management on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    let api: HeadlessTestClient;
    let ada: User;

    async function setUp(settings: Partial<SettingValues> = {}) {
      latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...settings } });
      ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
      expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
    }
    const addVerified = (email: string) => latchkey.deps.store.emailAddresses.add({ userId: ada.id, email, verified: true, primary: false });
    const stored = async () => (await latchkey.deps.store.emailAddresses.listForUser(ada.id)).map(({ email, primary, verified }) => ({ email, primary, verified }));

    it('lists the addresses, primary first', async () => {
      await setUp();
      await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: false, primary: false });
      const response = await api.get('/account/email');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        status: 200,
        data: [
          { email: 'ada@example.com', primary: true, verified: true },
          { email: 'second@example.com', primary: false, verified: false },
        ],
      });
      expect(response.headers['cache-control']).toBe('no-store');
    });

    it('answers 401 to every operation when signed out, and changes nothing', async () => {
      await setUp();
      const stranger = api.another();
      const responses = [
        await stranger.get('/account/email'),
        await stranger.post('/account/email', { email: 'new@example.com' }),
        await stranger.put('/account/email', { email: 'ada@example.com' }),
        await stranger.patch('/account/email', { email: 'ada@example.com', primary: true }),
        await stranger.delete('/account/email', { email: 'ada@example.com' }),
      ];
      for (const response of responses) {
        expect(response.status).toBe(401);
        expect(response.body.meta).toEqual({ is_authenticated: false });
      }
      expect(await stored()).toEqual([{ email: 'ada@example.com', primary: true, verified: true }]);
    });

    it('adds an address, mails its link, and the link verifies it', async () => {
      await setUp();
      const added = await api.post('/account/email', { email: 'Second@Example.com' });
      expect(added.status).toBe(200);
      expect(added.body.data).toEqual([
        { email: 'ada@example.com', primary: true, verified: true },
        { email: 'second@example.com', primary: false, verified: false },
      ]);
      const link = /\/accounts\/confirm-email\/([^/\s]+)\//.exec(latchkey.mailer.lastTo('second@example.com')?.text ?? '');
      expect(link).not.toBeNull();
      expect((await api.post('/auth/email/verify', { key: decodeURIComponent(link![1]!) })).status).toBe(200);
      expect((await api.get('/account/email')).body.data).toContainEqual({ email: 'second@example.com', primary: false, verified: true });
    });

    it('refuses to add what is not a new address of hers, on the email field', async () => {
      await setUp();
      const invalid = { message: 'Enter a valid email address.', code: 'invalid', param: 'email' };
      const cases = [
        [{ email: 'not an address' }, invalid],
        [{}, invalid],
        [{ email: ['a@example.com'] }, invalid],
        [{ email: 'ADA@example.com' }, { message: 'This email address is already associated with this account.', code: 'email_taken', param: 'email' }],
      ] as const;
      for (const [body, error] of cases) {
        const response = await api.post('/account/email', body);
        expect(response.status).toBe(400);
        expect(response.body.errors).toEqual([error]);
      }
      expect(await stored()).toHaveLength(1);
      expect(latchkey.mailer.outbox).toEqual([]);
    });

    it('sends the link again within the confirm_email limit (429 with Retry-After)', async () => {
      await setUp();
      await api.post('/account/email', { email: 'second@example.com' });
      latchkey.mailer.clear();
      const early = await api.put('/account/email', { email: 'second@example.com' });
      expect(early.status).toBe(429);
      expect(early.body.status).toBe(429);
      expect(early.headers['retry-after']).toBe('180');
      expect(latchkey.mailer.outbox).toEqual([]);
      latchkey.clock.advance(180 * 1000);
      const later = await api.put('/account/email', { email: 'second@example.com' });
      expect(later.status).toBe(200);
      expect(later.body).toEqual({ status: 200 });
      expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['second@example.com']]);
    });

    it('refuses to send a link for a verified address or one that is not hers', async () => {
      await setUp();
      const verified = await api.put('/account/email', { email: 'ada@example.com' });
      expect(verified.status).toBe(400);
      expect(verified.body.errors).toEqual([{ message: 'This email address is already verified.', code: 'invalid', param: 'email' }]);
      const foreign = await api.put('/account/email', { email: 'nobody@example.com' });
      expect(foreign.body.errors).toEqual([NOT_YOURS]);
      expect(latchkey.mailer.outbox).toEqual([]);
    });

    it('makes a verified address primary', async () => {
      await setUp();
      await addVerified('second@example.com');
      const response = await api.patch('/account/email', { email: 'second@example.com', primary: true });
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual([
        { email: 'second@example.com', primary: true, verified: true },
        { email: 'ada@example.com', primary: false, verified: true },
      ]);
      expect(latchkey.mailer.lastTo('ada@example.com')?.subject).toBe('[Test Site] Your primary email address was changed');
    });

    it('refuses to make primary an unverified address or one not hers, and anything but primary: true', async () => {
      await setUp();
      await addVerified('second@example.com');
      await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'pending@example.com', verified: false, primary: false });
      const onlyPrimary = { message: 'Only "primary": true is accepted.', code: 'invalid', param: 'primary' };
      const cases = [
        [{ email: 'pending@example.com', primary: true }, { message: 'Your primary email address must be verified.', code: 'invalid', param: 'email' }],
        [{ email: 'nobody@example.com', primary: true }, NOT_YOURS],
        [{ email: 'second@example.com', primary: false }, onlyPrimary],
        [{ email: 'second@example.com' }, onlyPrimary],
      ] as const;
      for (const [body, error] of cases) {
        const response = await api.patch('/account/email', body);
        expect(response.status).toBe(400);
        expect(response.body.errors).toEqual([error]);
      }
      expect((await stored())[0]).toEqual({ email: 'ada@example.com', primary: true, verified: true });
    });

    it('removes an address, never the primary one nor another account\'s', async () => {
      await setUp();
      await addVerified('second@example.com');
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      const primary = await api.delete('/account/email', { email: 'ada@example.com' });
      expect(primary.status).toBe(400);
      expect(primary.body.errors).toEqual([{ message: 'You cannot remove your primary email address.', code: 'invalid', param: 'email' }]);
      const foreign = await api.delete('/account/email', { email: 'bob@example.com' });
      expect(foreign.body.errors).toEqual([NOT_YOURS]);
      expect(await latchkey.deps.store.emailAddresses.listForUser(bob.id)).toHaveLength(1);
      const removed = await api.delete('/account/email', { email: 'second@example.com' });
      expect(removed.status).toBe(200);
      expect(removed.body.data).toEqual([{ email: 'ada@example.com', primary: true, verified: true }]);
    });

    it('asks a stale session to reauthenticate before a change, then makes it', async () => {
      await setUp();
      await addVerified('second@example.com');
      await addVerified('third@example.com');
      const loggedInAt = latchkey.clock.now().getTime() / 1000;
      latchkey.clock.advance(301 * 1000);
      const before = await stored();
      const refusals = [
        await api.post('/account/email', { email: 'new@example.com' }),
        await api.patch('/account/email', { email: 'second@example.com', primary: true }),
        await api.delete('/account/email', { email: 'third@example.com' }),
      ];
      for (const response of refusals) {
        expect(response.status).toBe(401);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.body).toEqual({
          status: 401,
          data: {
            user: { id: ada.id, display: 'ada', has_usable_password: true, email: 'ada@example.com', username: 'ada' },
            methods: [{ method: 'password', at: loggedInAt, username: 'ada' }],
            flows: [{ id: 'reauthenticate' }],
          },
          meta: { is_authenticated: true },
        });
      }
      expect(await stored()).toEqual(before);
      expect(latchkey.mailer.outbox).toEqual([]);
      // Reading needs no fresh proof.
      expect((await api.get('/account/email')).status).toBe(200);

      expect((await api.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      expect((await api.post('/account/email', { email: 'new@example.com' })).status).toBe(200);
      expect((await api.patch('/account/email', { email: 'second@example.com', primary: true })).status).toBe(200);
      const removed = await api.delete('/account/email', { email: 'third@example.com' });
      expect(removed.body.data).toEqual([
        { email: 'second@example.com', primary: true, verified: true },
        { email: 'ada@example.com', primary: false, verified: true },
        { email: 'new@example.com', primary: false, verified: false },
      ]);
    });

    it('sends a link again from a stale session: a resend changes nothing', async () => {
      await setUp();
      await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'pending@example.com', verified: false, primary: false });
      latchkey.clock.advance(301 * 1000);
      expect((await api.put('/account/email', { email: 'pending@example.com' })).status).toBe(200);
      expect(latchkey.mailer.lastTo('pending@example.com')?.text).toContain('/accounts/confirm-email/');
    });

    it('limits changes per user (manage_email) with 429 and Retry-After', async () => {
      await setUp({ ACCOUNT_RATE_LIMITS: { manage_email: '2/m/user' } });
      expect((await api.post('/account/email', { email: 'one@example.com' })).status).toBe(200);
      expect((await api.post('/account/email', { email: 'two@example.com' })).status).toBe(200);
      const refused = await api.post('/account/email', { email: 'three@example.com' });
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('60');
      expect(await stored()).toHaveLength(3);
    });

    if (client === 'app') {
      it('answers 410 to a session token that names no session', async () => {
        await setUp();
        const response = await api.get('/account/email', { headers: { 'x-session-token': 'gone' } });
        expect(response.status).toBe(410);
        expect(response.body.meta).toEqual({ is_authenticated: false });
      });
    }
  });
});
