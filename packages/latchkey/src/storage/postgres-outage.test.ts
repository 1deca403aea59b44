/**
 * PostgreSQL restarted while the site serves requests (issue 19, faults). The application reaches
 * the shared server through a TCP proxy of the test's own (testing/tcp-proxy.ts): cutting it drops
 * every connection and refuses new ones, which is what a restart looks like from here, without
 * touching the server CI uses. A request in flight fails cleanly (503, nothing internal said), the
 * process lives on, the pool reconnects by itself once the server is back, and the transaction
 * the cut interrupted left nothing half-written. Runs when TEST_DATABASE_URL is set.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../account/users.js';
import type { User } from '../account/model.js';
import { ManualClock } from '../core/clock.js';
import { openLatchkey } from '../latchkey.js';
import { MemoryMailer } from '../mail/index.js';
import { createTestDatabase, testPostgresUrl, type TestDatabase } from '../testing/database.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { testSettings, type TestLatchkey } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';
import { TcpProxy } from '../testing/tcp-proxy.js';
import { openDatabase, type Database } from './database.js';

const OLD_PASSWORD = 'the old long passphrase';
const NEW_PASSWORD = 'the new long passphrase';
/** node-postgres's default pool size, which the site keeps. */
const POOL_SIZE = 10;
/** What no answer may contain: the driver's words, addresses, SQL, a stack frame. */
const INTERNALS = /Connection terminated|not queryable|ECONNREFUSED|127\.0\.0\.1|latchkey_|\bat \w+ \(/;

/** TEST_DATABASE_URL with its host and port replaced by the proxy's. */
function throughProxy(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  return parsed.toString();
}

describe.runIf(testPostgresUrl() !== undefined)('PostgreSQL restarted mid-run', () => {
  let direct: TestDatabase;
  let proxy: TcpProxy;
  let proxied: Database;
  let latchkey: TestLatchkey;
  let pages: PageClient;
  let ada: User;

  beforeAll(async () => {
    // The schema is made and migrated directly; the site itself connects through the proxy.
    direct = await createTestDatabase('postgres', 'username');
    const server = new URL(testPostgresUrl()!);
    proxy = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 5432) });
    proxied = await openDatabase({ ...direct.openOptions, url: throughProxy(testPostgresUrl()!, proxy.port), connectTimeoutMs: 2000 });
    const settings = testSettings();
    const clock = new ManualClock();
    const mailer = new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL });
    const site = await openLatchkey({ settings, clock, mailer, database: proxied, migrations: 'require' });
    latchkey = { ...site, clock, mailer, destroy: () => site.close() };
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: OLD_PASSWORD, emailVerified: true });
    pages = await PageClient.create(latchkey, { plugin: { headless: true } });
  });

  afterAll(async () => {
    await pages?.close();
    await latchkey?.destroy();
    await proxy?.close();
    await direct?.destroy();
  });

  const api = () => new HeadlessTestClient(pages.app, 'app', latchkey);

  async function signedIn(password: string): Promise<HeadlessTestClient> {
    const client = api();
    expect((await client.post('/auth/login', { username: 'ada', password })).status).toBe(200);
    return client;
  }

  /** Ada's password hash and session count, read around the proxy. */
  async function adaRows(): Promise<{ password: string; sessions: number }> {
    const user = await direct.kysely.selectFrom('latchkey_users').select('password').where('id', '=', ada.id).executeTakeFirstOrThrow();
    const sessions = await direct.kysely.selectFrom('latchkey_sessions').select(sql<number>`count(*)`.as('count')).where('user_id', '=', ada.id).executeTakeFirstOrThrow();
    return { password: user.password, sessions: Number(sessions.count) };
  }

  it('fails the request in flight with a clean 503, refuses cleanly while down, and serves again once back, with nothing half-written', async () => {
    const changer = await signedIn(OLD_PASSWORD);
    const other = await signedIn(OLD_PASSWORD);
    const browser = pages.another();
    expect((await browser.post('/accounts/login/', { login: 'ada', password: OLD_PASSWORD })).statusCode).toBe(302);
    const before = await adaRows();
    expect(before.sessions).toBe(3);

    // The change has replaced the hash in its transaction and is about to end the other sessions
    // when the server goes away.
    const midTransaction = proxy.holdWhen((chunk) => chunk.includes('delete from "latchkey_sessions" where "user_id"'));
    const change = changer.post('/account/password/change', { current_password: OLD_PASSWORD, new_password: NEW_PASSWORD });
    await midTransaction;
    await proxy.cut();

    const interrupted = await change;
    expect(interrupted.status).toBe(503);
    expect(interrupted.body.errors).toEqual([{ message: expect.stringContaining('temporarily unavailable') as unknown, code: 'server_busy' }]);
    expect(interrupted.raw.body).not.toMatch(INTERNALS);

    // While the server is down, every request that needs it is refused at once, in each door's shape.
    const session = await other.get('/auth/session');
    expect(session.status).toBe(503);
    expect(session.raw.body).not.toMatch(INTERNALS);
    const page = await browser.get('/accounts/password/change/');
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain('Service Unavailable (503)');
    expect(page.body).not.toMatch(INTERNALS);

    await proxy.restore();

    // The pool reconnects by itself. A connection the cut dropped while it sat idle may still be
    // in the pool until its close event has been read, and fails the one request that draws it,
    // cleanly: so the site serves again within as many requests as the pool holds connections.
    const afterRestore: number[] = [];
    for (let attempt = 0; attempt < POOL_SIZE && afterRestore.at(-1) !== 200; attempt += 1) {
      const answer = await other.get('/auth/session');
      expect(answer.raw.body).not.toMatch(INTERNALS);
      afterRestore.push(answer.status);
    }
    expect(afterRestore.at(-1)).toBe(200);
    expect(afterRestore.slice(0, -1).every((status) => status === 503)).toBe(true);
    // The interrupted change never happened.
    expect(await adaRows()).toEqual(before);
    expect((await api().post('/auth/login', { username: 'ada', password: NEW_PASSWORD })).status).toBe(400);

    // And the change can simply be made again.
    expect((await changer.post('/account/password/change', { current_password: OLD_PASSWORD, new_password: NEW_PASSWORD })).status).toBe(200);
    expect((await other.get('/auth/session')).status).toBe(410);
    await signedIn(NEW_PASSWORD);
  });

  it('survives the server dropping a connection that a transaction holds between two statements', async () => {
    // The connection is checked out of the pool and idle when it drops: node-postgres reports that
    // as an 'error' event on the client, which would end the process if nobody listened.
    const outcome = await proxied.kysely.connection().execute(async (connection) => {
      await sql`select 1`.execute(connection);
      await proxy.cut();
      return sql`select 1`.execute(connection).then(
        () => 'answered',
        () => 'refused',
      );
    });
    expect(outcome).toBe('refused');
    await proxy.restore();
    expect((await sql<{ one: number }>`select 1 as one`.execute(proxied.kysely)).rows).toEqual([{ one: 1 }]);
  });
});
