/**
 * Hostile input through the headless API, for both clients and both databases:
 * SQL in every identifier field, oversized and malformed bodies, values of the wrong type, extra
 * fields, and identifiers that collide once normalized. No input may produce a 500 or a stack
 * trace; every refusal is an ordinary 4xx in the API's envelope.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { makePasswordResetKey } from '../../account/flows/password-reset.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient, type HeadlessResponse } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';

/** Classic and time-based injections, for SQLite and PostgreSQL alike. */
const INJECTIONS = [
  `' OR '1'='1`,
  `ada'--`,
  `ada' OR 1=1 --`,
  `"; DROP TABLE users; --`,
  `ada'); DELETE FROM users; --`,
  `' UNION SELECT password FROM users --`,
  `1; SELECT pg_sleep(5) --`,
  `' || (SELECT sqlite_version()) || '`,
  `ada@example.com' OR '1'='1`,
  `%' OR username LIKE '%`,
  `\\'; SELECT 1; --`,
];

/** A refusal that shows nothing of the server: no stack, no file, no query. */
function expectPlainRefusal(response: HeadlessResponse, status: number): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.body.status).toBe(status);
  expect(response.body.errors?.length).toBeGreaterThan(0);
  expect(response.raw.body).not.toMatch(/\bat \S+ \(|node_modules|\.[jt]s:\d+|SELECT|sqlite|postgres/i);
}

describe.each(testDatabaseKinds())('headless API input (SQL, sizes, malformed bodies, collisions) on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let ada: User;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...settings } });
    app = await HeadlessTestClient.createApp(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  const hashes = (): number => latchkey.deps.passwords.stats().completed;

  describe.each(['browser', 'app'] as const)('%s client', (which) => {
    const client = (): HeadlessTestClient => new HeadlessTestClient(app, which, latchkey);

    it('SQL in identifiers, keys and session tokens is only a wrong value', async () => {
      await setUp();
      for (const injection of INJECTIONS) {
        const api = client();
        expectPlainRefusal(await api.post('/auth/login', { username: injection, password: PASSWORD }), 400);
        expectPlainRefusal(await api.post('/auth/login', { email: injection, password: PASSWORD }), 400);
        expectPlainRefusal(await api.post('/auth/login', { username: 'ada', password: injection }), 400);
        expectPlainRefusal(await api.post('/auth/signup', { email: injection, username: 'newbie', password: PASSWORD }), 400);
        expectPlainRefusal(await api.post('/auth/signup', { email: 'newbie@example.com', username: injection, password: PASSWORD }), 400);
        expectPlainRefusal(await api.post('/auth/password/request', { email: injection }), 400);
        expectPlainRefusal(await api.get('/auth/email/verify', { headers: { 'x-email-verification-key': injection } }), 400);
        expectPlainRefusal(await api.get('/auth/password/reset', { headers: { 'x-password-reset-key': injection } }), 400);
        expectPlainRefusal(await api.post('/auth/email/verify', { key: injection }), 400);
        const session =
          which === 'app'
            ? await api.get('/auth/session', { headers: { 'x-session-token': injection } })
            : await api.get('/auth/session', { headers: { cookie: `${latchkey.settings.SESSION_COOKIE_NAME}=${encodeURIComponent(injection)}` } });
        expect(session.status).toBe(which === 'app' ? 410 : 401);
        // Past the login and signup limits of one address, so that every attempt reaches the flows.
        latchkey.clock.advance(5 * 60_000 + 1000);
      }
      expect(await latchkey.deps.store.users.count()).toBe(1);
      expect((await client().post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
    });

    it('a 1 MB password is refused with 400 wherever it is given, and never hashed', async () => {
      await setUp();
      const huge = 'x'.repeat(1_000_000);
      const signed = client();
      expect((await signed.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
      const key = makePasswordResetKey(latchkey.deps, (await latchkey.deps.store.users.findById(ada.id))!);
      const before = hashes();
      expectPlainRefusal(await client().post('/auth/login', { username: 'ada', password: huge }), 400);
      expectPlainRefusal(await client().post('/auth/login', { username: 'nobody', password: huge }), 400);
      const signup = await client().post('/auth/signup', { email: 'newbie@example.com', username: 'newbie', password: huge });
      expectPlainRefusal(signup, 400);
      expect(signup.body.errors?.[0]?.param).toBe('password');
      expectPlainRefusal(await client().post('/auth/password/reset', { key, password: huge }), 400);
      expectPlainRefusal(await signed.post('/auth/reauthenticate', { password: huge }), 400);
      expectPlainRefusal(await signed.post('/account/password/change', { current_password: huge, new_password: NEW_PASSWORD }), 400);
      expectPlainRefusal(await signed.post('/account/password/change', { current_password: PASSWORD, new_password: huge }), 400);
      expect(hashes() - before).toBe(0);
      expect(await latchkey.deps.store.users.count()).toBe(1);
    });

    it('long passwords work up to the limit, in full: no truncation at 72 bytes', async () => {
      await setUp();
      const long = 'correct horse battery staple '.repeat(200).slice(0, latchkey.settings.PASSWORD_MAX_BYTES);
      expect((await client().post('/auth/signup', { email: 'long@example.com', username: 'long', password: long })).status).toBe(200);
      expect((await client().post('/auth/login', { username: 'long', password: long })).status).toBe(200);
      const tooLong = await client().post('/auth/signup', { email: 'longer@example.com', username: 'longer', password: `${long}x` });
      expectPlainRefusal(tooLong, 400);
      const eighty = `${'0123456789abcdef'.repeat(5)}`;
      expect((await client().post('/auth/signup', { email: 'eighty@example.com', username: 'eighty', password: eighty })).status).toBe(200);
      expectPlainRefusal(await client().post('/auth/login', { username: 'eighty', password: `${eighty.slice(0, 72)}XXXXXXXX` }), 400);
      expect((await client().post('/auth/login', { username: 'eighty', password: eighty })).status).toBe(200);
    });

    it('a body over the limit is refused with 413 in the envelope, before anything is read', async () => {
      await setUp();
      const before = hashes();
      const response = await client().post('/auth/login', undefined, {
        payload: JSON.stringify({ username: 'ada', password: 'x'.repeat(10 * 1024 * 1024) }),
        headers: { 'content-type': 'application/json' },
        // 413 is Fastify's own refusal of the request, outside the contract's operations.
        validate: false,
      });
      expectPlainRefusal(response, 413);
      expect(hashes()).toBe(before);
    });

    it('malformed and mistyped bodies are 400, never 500', async () => {
      await setUp();
      const json = 'application/json';
      const bodies: [string, string | Buffer][] = [
        ['invalid JSON', '{"username": "ada", "password": '],
        ['invalid UTF-8', Buffer.concat([Buffer.from('{"username":"ad'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(`a","password":"${PASSWORD}"}`)])],
        ['a NUL in the username', JSON.stringify({ username: 'ada\u0000', password: PASSWORD })],
        ['a NUL in the password', JSON.stringify({ username: 'ada', password: `${PASSWORD}\u0000` })],
        ['an operator for the password', JSON.stringify({ username: 'ada', password: { $ne: '' } })],
        ['an operator for the username', JSON.stringify({ username: { $gt: '' }, password: PASSWORD })],
        ['arrays', JSON.stringify({ username: ['ada'], password: [PASSWORD] })],
        ['numbers', JSON.stringify({ username: 1, password: 12345678 })],
        ['null fields', JSON.stringify({ username: null, password: null })],
        ['null', 'null'],
        ['a JSON array', JSON.stringify([{ username: 'ada', password: PASSWORD }])],
        ['a JSON string', JSON.stringify('ada')],
        ['a number', '42'],
        ['nothing', ''],
        ['a prototype key', `{"__proto__":{"is_staff":true},"username":"ada","password":"${PASSWORD}"}`],
        ['a constructor key', `{"constructor":{"prototype":{"is_staff":true}},"username":"ada","password":"${PASSWORD}"}`],
      ];
      for (const path of ['/auth/login', '/auth/signup', '/auth/password/request', '/auth/email/verify']) {
        for (const [what, payload] of bodies) {
          const response = await client().post(path, undefined, { payload, headers: { 'content-type': json } });
          expect(response.status, `${path} with ${what}: ${JSON.stringify(response.body)}`).toBe(400);
          expectPlainRefusal(response, 400);
        }
        latchkey.clock.advance(5 * 60_000 + 1000);
      }
      expect(await latchkey.deps.store.users.count()).toBe(1);
      expect(latchkey.mailer.outbox).toEqual([]);
      expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
    });

    it('duplicate keys are read as JSON.parse reads them (the last one counts)', async () => {
      await setUp();
      const lastRight = await client().post('/auth/login', undefined, { payload: `{"username":"nobody","username":"ada","password":"wrong","password":"${PASSWORD}"}`, headers: { 'content-type': 'application/json' } });
      expect(lastRight.status).toBe(200);
      const lastWrong = await client().post('/auth/login', undefined, { payload: `{"username":"ada","password":"${PASSWORD}","password":"wrong"}`, headers: { 'content-type': 'application/json' } });
      expectPlainRefusal(lastWrong, 400);
    });

    it('extra fields in a signup are ignored: no staff, no superuser, no verified address', async () => {
      await setUp();
      const api = client();
      const signup = await api.post('/auth/signup', {
        email: 'eve@example.com',
        username: 'eve',
        password: PASSWORD,
        is_staff: true,
        is_superuser: true,
        is_active: false,
        email_verified: true,
        verified: true,
        id: ada.id,
        username_key: 'ada',
      });
      expect(signup.status).toBe(200);
      expect(signup.body.data.user).toMatchObject({ username: 'eve', email: 'eve@example.com' });
      const eve = (await latchkey.deps.store.users.findByUsername('eve'))!;
      expect(eve).toMatchObject({ isStaff: false, isSuperuser: false, isActive: true });
      expect(eve.id).not.toBe(ada.id);
      expect((await api.get('/account/email')).body.data).toEqual([{ email: 'eve@example.com', primary: true, verified: false }]);
      expect((await latchkey.deps.store.users.findById(ada.id))!.password).toBe(ada.password);
    });

    it('identifiers that collide after NFKC or case folding are one identifier', async () => {
      await setUp();
      expect((await client().post('/auth/signup', { email: 'admin@example.com', username: 'admin', password: PASSWORD })).status).toBe(200);
      for (const variant of ['ＡＤＭＩＮ', 'Admin', 'ADMIN']) {
        const taken = await client().post('/auth/signup', { email: `${variant.length}x${variant.codePointAt(0)!}@example.com`, username: variant, password: PASSWORD });
        expectPlainRefusal(taken, 400);
        expect(taken.body.errors?.[0]).toMatchObject({ code: 'username_taken', param: 'username' });
      }
      // The Kelvin sign (U+212A) folds to K.
      expect((await client().post('/auth/signup', { email: 'kelvin@example.com', username: 'kelvin', password: PASSWORD })).status).toBe(200);
      const kelvin = await client().post('/auth/signup', { email: 'kelvin2@example.com', username: '\u212Aelvin', password: PASSWORD });
      expect(kelvin.body.errors?.[0]).toMatchObject({ code: 'username_taken', param: 'username' });
      // Addresses fold too: fullwidth letters and case name the account that exists.
      for (const variant of ['ADMIN@EXAMPLE.COM', 'ａｄｍｉｎ@example.com']) {
        const taken = await client().post('/auth/signup', { email: variant, username: `other${variant.length}`, password: PASSWORD });
        expectPlainRefusal(taken, 400);
        expect(taken.body.errors?.[0]).toMatchObject({ code: 'email_taken', param: 'email' });
      }
      expect(await latchkey.deps.store.users.count()).toBe(3);
      // And a login by a variant reaches the one account.
      const login = await client().post('/auth/login', { username: 'ＡＤＭＩＮ', password: PASSWORD });
      expect(login.status).toBe(200);
      expect(login.body.data.user.username).toBe('admin');
    });
  });
});
