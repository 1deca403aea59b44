/**
 * Redis stopped while the site serves requests (issue 19, faults): rate limits and one-time codes
 * fail closed. A login, a TOTP code, a login-by-code request and a reset request are answered 503
 * at once (a frozen server: within the command timeout), nothing gets through uncounted, one line
 * says so in the log, and once Redis is back on the same port everything works again without a
 * restart of the site. The Redis server is the test's own (testing/redis-server.ts); the machine's
 * shared one is never touched. Part of the Redis-backed suites: it runs when REDIS_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../account/users.js';
import type { User } from '../account/model.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor, totpCodeAt, type ActivatedTotp } from '../testing/mfa.js';
import { PageClient } from '../testing/pages.js';
import { TestRedisServer } from '../testing/redis-server.js';
import { testRedisUrl } from '../testing/shared-stores.js';
import type { LatchkeyLog } from '../latchkey.js';
import { REDIS_UNAVAILABLE_MESSAGE } from './redis-connection.js';

const PASSWORD = 'a long enough passphrase';
const REDIS_PASSWORD = 'redis-s3cret';
/** Far more than a refusal takes (at once; a frozen server: the 2 s command timeout), far less than a hang. */
const PROMPT_MS = 5000;

/** The log lines Latchkey writes, and a way to wait for the next one of a level. */
class RecordingLog implements LatchkeyLog {
  readonly lines: { level: 'warn' | 'info'; message: string }[] = [];
  private waiting: { level: 'warn' | 'info'; resolve: () => void }[] = [];

  warn(message: string): void {
    this.add('warn', message);
  }

  info(message: string): void {
    this.add('info', message);
  }

  /** Not an outage line: kept apart (a mail the outbox could not send, say). */
  readonly errors: string[] = [];

  error(message: string): void {
    this.errors.push(message);
  }

  next(level: 'warn' | 'info'): Promise<void> {
    return new Promise((resolve) => this.waiting.push({ level, resolve }));
  }

  of(level: 'warn' | 'info'): string[] {
    return this.lines.filter((line) => line.level === level).map((line) => line.message);
  }

  private add(level: 'warn' | 'info', message: string): void {
    this.lines.push({ level, message });
    for (const waiter of this.waiting.filter((candidate) => candidate.level === level)) waiter.resolve();
    this.waiting = this.waiting.filter((candidate) => candidate.level !== level);
  }
}

/** Runs a request and says how long it took, so a hang shows as a failure, not a stuck suite. */
async function timed<T>(request: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await request();
  return { result, ms: performance.now() - started };
}

describe.runIf(testRedisUrl() !== undefined)('Redis stopped mid-run', () => {
  let redis: TestRedisServer;
  let latchkey: TestLatchkey;
  let pages: PageClient;
  let log: RecordingLog;
  let ada: User;
  let bob: User;
  let totp: ActivatedTotp;

  beforeAll(async () => {
    redis = await TestRedisServer.start(REDIS_PASSWORD);
    log = new RecordingLog();
    latchkey = await createTestLatchkey({ settings: { REDIS_URL: redis.url, ACCOUNT_LOGIN_BY_CODE_ENABLED: true }, log });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
    pages = await PageClient.create(latchkey, { plugin: { headless: true } });
  });

  afterAll(async () => {
    await pages?.close();
    await latchkey?.destroy();
    await redis?.stop();
  });

  const api = () => new HeadlessTestClient(pages.app, 'app', latchkey);
  const sessionsOf = async (user: User) => (await latchkey.deps.sessions.listForUser(user.id)).length;

  it('answers 503 while Redis is stopped, lets nothing through, logs one line, and serves again once it is back', async () => {
    // Ada's password step is done while Redis is up: her code is asked for next.
    const adaApi = api();
    expect((await adaApi.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(401);
    const code = totp.code();
    const mailsBefore = latchkey.mailer.outbox.length;

    await redis.stop();

    const login = await timed(() => api().post('/auth/login', { username: 'bob', password: PASSWORD }));
    expect(login.result.status).toBe(503);
    expect(login.result.body.errors).toEqual([{ message: REDIS_UNAVAILABLE_MESSAGE, code: 'server_busy' }]);
    expect(login.ms).toBeLessThan(PROMPT_MS);

    const second = await timed(() => adaApi.post('/auth/2fa/authenticate', { code }));
    expect(second.result.status).toBe(503);
    expect(second.ms).toBeLessThan(PROMPT_MS);

    const byCode = await timed(() => api().post('/auth/code/request', { email: 'bob@example.com' }));
    expect(byCode.result.status).toBe(503);
    expect(byCode.ms).toBeLessThan(PROMPT_MS);

    const reset = await timed(() => api().post('/auth/password/request', { email: 'bob@example.com' }));
    expect(reset.result.status).toBe(503);
    expect(reset.ms).toBeLessThan(PROMPT_MS);

    // The login page says the same in HTML, with nothing of what failed.
    const page = await pages.post('/accounts/login/', { login: 'bob', password: PASSWORD });
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain(REDIS_UNAVAILABLE_MESSAGE);
    expect(page.body).not.toMatch(/ECONNREFUSED|ioredis|Stream isn't writeable|at \w+ \(/);

    // Failed closed: nobody signed in, no code or link mailed.
    expect(await sessionsOf(bob)).toBe(0);
    expect(await sessionsOf(ada)).toBe(0);
    expect(latchkey.mailer.outbox.length).toBe(mailsBefore);

    // One line for the whole outage, naming the server but not its password.
    expect(log.of('warn')).toHaveLength(1);
    expect(log.of('warn')[0]).toContain(`127.0.0.1:${redis.port}`);
    expect(log.of('warn')[0]).toContain('503');
    expect(log.lines.map((line) => line.message).join('\n')).not.toContain(REDIS_PASSWORD);

    // Redis returns on the same port (empty: it keeps nothing): the site reconnects by itself.
    const back = log.next('info');
    await redis.restart();
    await back;
    expect(log.of('info')).toHaveLength(1);

    expect((await api().post('/auth/login', { username: 'bob', password: PASSWORD })).status).toBe(200);
    const done = await adaApi.post('/auth/2fa/authenticate', { code });
    expect(done.status).toBe(200);
    expect(done.body.meta.is_authenticated).toBe(true);
    // The code is claimed again, so a second use of it is refused.
    const replay = api();
    expect((await replay.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(401);
    expect((await replay.post('/auth/2fa/authenticate', { code })).status).toBe(400);

    expect((await api().post('/auth/code/request', { email: 'bob@example.com' })).status).toBe(401);
    expect((await api().post('/auth/password/request', { email: 'bob@example.com' })).status).toBe(200);
    expect(latchkey.mailer.outbox.length).toBe(mailsBefore + 2);
  });

  it('answers 503 within the command timeout while Redis is frozen, and serves again once it answers', async () => {
    const warnings = log.of('warn').length;
    redis.freeze();
    try {
      const login = await timed(() => api().post('/auth/login', { username: 'bob', password: PASSWORD }));
      expect(login.result.status).toBe(503);
      expect(login.ms).toBeLessThan(PROMPT_MS);
      expect(log.of('warn')).toHaveLength(warnings + 1);
    } finally {
      redis.thaw();
    }
    const back = log.next('info');
    expect((await api().post('/auth/login', { username: 'bob', password: PASSWORD })).status).toBe(200);
    await back;
  });

  it('refuses an authenticator app activation whole while Redis is stopped: 503 and no app; it works once Redis is back', async () => {
    const carol = await createUser(latchkey.deps, { username: 'carol', email: 'carol@example.com', password: PASSWORD, emailVerified: true });
    const carolApi = api();
    expect((await carolApi.post('/auth/login', { username: 'carol', password: PASSWORD })).status).toBe(200);
    const setup = await carolApi.get('/account/authenticators/totp');
    expect(setup.status).toBe(404);
    const code = totpCodeAt(latchkey.deps, setup.body.meta.secret as string, latchkey.clock.now());

    await redis.stop();
    try {
      // Its code cannot be used up, so the app is not made: a 503, not an app the person was told failed.
      const refused = await timed(() => carolApi.post('/account/authenticators/totp', { code }));
      expect(refused.result.status).toBe(503);
      expect(refused.ms).toBeLessThan(PROMPT_MS);
      expect(await latchkey.deps.store.authenticators.listForUser(carol.id)).toEqual([]);
    } finally {
      const back = log.next('info');
      await redis.restart();
      await back;
    }
    expect((await carolApi.post('/account/authenticators/totp', { code })).status).toBe(200);
    expect((await latchkey.deps.store.authenticators.listForUser(carol.id)).map((authenticator) => authenticator.type).sort()).toEqual(['recovery_codes', 'totp']);
  });
});
