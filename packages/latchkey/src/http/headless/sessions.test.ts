/**
 * auth/sessions: a user lists their live sessions and ends some of them, never anyone else's;
 * for both clients on every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { publicSessionId } from '../../sessions/public-id.js';

const PASSWORD = 'a long enough passphrase';

interface SessionRow {
  id: number;
  user_agent: string;
  ip: string;
  created_at: number;
  last_seen_at: number;
  is_current: boolean;
}

it('derives a stable safe integer from the first 48 bits of the stored hash', () => {
  expect(publicSessionId('ffffffffffff' + '0'.repeat(52))).toBe(2 ** 48 - 1);
  expect(publicSessionId('000000000001' + 'f'.repeat(52))).toBe(1);
  expect(Number.isSafeInteger(publicSessionId('9'.repeat(64)))).toBe(true);
});

describe.each(testDatabaseKinds())('headless sessions on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(client: 'browser' | 'app'): Promise<HeadlessTestClient> {
    latchkey = await createTestLatchkey({ kind });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  async function signIn(api: HeadlessTestClient, username: string, userAgent: string): Promise<void> {
    expect((await api.post('/auth/login', { username, password: PASSWORD }, { headers: { 'user-agent': userAgent } })).status).toBe(200);
  }

  const now = () => latchkey.clock.now().getTime() / 1000;

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('lists the user\'s live sessions, newest activity first, marking this one', async () => {
      const api = await setUp(client);
      expect((await api.get('/auth/sessions')).status).toBe(401);
      const loggedInAt = now();
      await signIn(api, 'ada', 'Laptop/1.0');
      latchkey.clock.advance(120_000);
      const phone = api.another();
      await signIn(phone, 'ada', 'Phone/2.0');
      await signIn(api.another(), 'bob', 'Bob/1.0');

      const listed = await phone.get('/auth/sessions');
      expect(listed.status).toBe(200);
      const rows = listed.body.data as SessionRow[];
      expect(rows.map(({ id: _id, ...row }) => row)).toEqual([
        { user_agent: 'Phone/2.0', ip: '127.0.0.1', created_at: now(), last_seen_at: now(), is_current: true },
        { user_agent: 'Laptop/1.0', ip: '127.0.0.1', created_at: loggedInAt, last_seen_at: loggedInAt, is_current: false },
      ]);
      expect(rows.every((row) => Number.isSafeInteger(row.id) && row.id >= 0)).toBe(true);
      expect(new Set(rows.map((row) => row.id)).size).toBe(2);
      // The same id on every listing; the other device sees itself as current.
      const fromLaptop = (await api.get('/auth/sessions')).body.data as SessionRow[];
      expect(fromLaptop.map((row) => [row.id, row.is_current])).toEqual(expect.arrayContaining([[rows[0]!.id, false], [rows[1]!.id, true]]));
    });

    it('ends another session of the user, and ignores ids of other users\' sessions and unknown ids', async () => {
      const api = await setUp(client);
      await signIn(api, 'ada', 'Laptop/1.0');
      const phone = api.another();
      await signIn(phone, 'ada', 'Phone/2.0');
      const bob = api.another();
      await signIn(bob, 'bob', 'Bob/1.0');
      const bobId = ((await bob.get('/auth/sessions')).body.data as SessionRow[])[0]!.id;
      const phoneId = ((await phone.get('/auth/sessions')).body.data as SessionRow[]).find((row) => row.is_current)!.id;

      const ignored = await api.delete('/auth/sessions', { sessions: [bobId, 12345] });
      expect(ignored.status).toBe(200);
      expect((ignored.body.data as SessionRow[]).length).toBe(2);
      expect((await bob.get('/auth/session')).status).toBe(200);

      const ended = await api.delete('/auth/sessions', { sessions: [phoneId, bobId] });
      expect(ended.status).toBe(200);
      expect((ended.body.data as SessionRow[]).map((row) => [row.user_agent, row.is_current])).toEqual([['Laptop/1.0', true]]);
      expect((await phone.get('/auth/session')).status).toBe(client === 'app' ? 410 : 401);
      expect((await bob.get('/auth/session')).status).toBe(200);
      expect((await api.get('/auth/session')).status).toBe(200);
    });

    it('signs out when the current session is among those ended', async () => {
      const api = await setUp(client);
      await signIn(api, 'ada', 'Laptop/1.0');
      const phone = api.another();
      await signIn(phone, 'ada', 'Phone/2.0');
      const ids = ((await api.get('/auth/sessions')).body.data as SessionRow[]).map((row) => row.id);

      const response = await api.delete('/auth/sessions', { sessions: ids });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ data: { flows: [{ id: 'login' }, { id: 'signup' }] }, meta: { is_authenticated: false } });
      expect((await api.get('/auth/session')).status).toBe(client === 'app' ? 410 : 401);
      expect((await phone.get('/auth/session')).status).toBe(client === 'app' ? 410 : 401);
      const ada = await latchkey.deps.store.users.findByUsername('ada');
      expect(await latchkey.deps.sessions.listForUser(ada!.id)).toEqual([]);
    });

    it('refuses a malformed list without ending anything', async () => {
      const api = await setUp(client);
      await signIn(api, 'ada', 'Laptop/1.0');
      const phone = api.another();
      await signIn(phone, 'ada', 'Phone/2.0');
      const ids = ((await api.get('/auth/sessions')).body.data as SessionRow[]).map((row) => row.id);
      // The contract lists no 400 for this operation: these requests are outside it on purpose.
      for (const body of [{}, { sessions: ids.map(String) }, { sessions: ids[0] }, { sessions: [...ids, 1.5] }, { sessions: null }]) {
        const response = await api.delete('/auth/sessions', body, { validate: false });
        expect(response.status).toBe(400);
        expect(response.body.errors).toEqual([{ message: 'Give the ids of the sessions to end, as a list of integers.', code: 'invalid', param: 'sessions' }]);
      }
      expect((await api.get('/auth/sessions')).body.data).toHaveLength(2);
      expect((await phone.get('/auth/session')).status).toBe(200);
    });
  });
});
