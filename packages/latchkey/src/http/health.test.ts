/**
 * GET /health/ as a load balancer calls it: through an app mounted as a project mounts Latchkey
 * (the allowed-hosts guard on the whole app), on each database, with and without Redis, and with
 * each service gone: the database closed, Redis stopped (its port closed).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { testDatabaseKinds } from '../testing/database.js';
import { TestRedisServer } from '../testing/redis-server.js';
import { testRedisUrl } from '../testing/shared-stores.js';
import type { LatchkeyLog } from '../latchkey.js';

/** Outage lines go nowhere: the health answer is what is checked. */
const quiet: LatchkeyLog = { warn: () => undefined, info: () => undefined, error: () => undefined };

async function siteApp(latchkey: TestLatchkey): Promise<FastifyInstance> {
  const app = Fastify();
  app.addHook('onRequest', latchkey.allowedHostsGuard);
  await app.register(latchkey.plugin);
  await app.ready();
  return app;
}

async function health(app: FastifyInstance, host = 'testserver') {
  const response = await app.inject({ method: 'GET', url: '/health/', headers: { host } });
  return { status: response.statusCode, headers: response.headers, body: response.json<Record<string, string>>() };
}

let latchkey: TestLatchkey | undefined;
let redis: TestRedisServer | undefined;
afterEach(async () => {
  await latchkey?.destroy();
  await redis?.stop();
  latchkey = undefined;
  redis = undefined;
});

describe.each(testDatabaseKinds())('GET /health/ on %s', (kind) => {
  it('answers 200 with the database ok and Redis not configured, never cached, without a cookie', async () => {
    latchkey = await createTestLatchkey({ kind });
    const app = await siteApp(latchkey);
    const answer = await health(app);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok', database: 'ok', redis: 'not configured' });
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['set-cookie']).toBeUndefined();
    const head = await app.inject({ method: 'HEAD', url: '/health/', headers: { host: 'testserver' } });
    expect(head.statusCode).toBe(200);
  });

  it('answers a load balancer that calls by IP address, while every other page still refuses that Host', async () => {
    latchkey = await createTestLatchkey({ kind });
    const app = await siteApp(latchkey);
    expect((await health(app, '10.0.0.7:8000')).status).toBe(200);
    expect((await app.inject({ method: 'HEAD', url: '/health/', headers: { host: '10.0.0.7' } })).statusCode).toBe(200);
    expect((await health(app, 'evil.example')).body).toEqual({ status: 'ok', database: 'ok', redis: 'not configured' });
    const login = await app.inject({ method: 'GET', url: '/accounts/login/', headers: { host: '10.0.0.7:8000' } });
    expect(login.statusCode).toBe(400);
    // The exemption is the route's, not the path prefix's.
    const below = await app.inject({ method: 'GET', url: '/health/x', headers: { host: '10.0.0.7' } });
    expect(below.statusCode).toBe(400);
  });

  it('is never rate-limited: a burst of checks all answer 200', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_RATE_LIMITS: { login: '1/m/ip', signup: '1/m/ip' } } });
    const app = await siteApp(latchkey);
    const statuses = await Promise.all(Array.from({ length: 50 }, async () => (await health(app)).status));
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  it('answers 503 naming the database when it does not answer, with no error text in the body', async () => {
    latchkey = await createTestLatchkey({ kind });
    const app = await siteApp(latchkey);
    await latchkey.database.close();
    const response = await app.inject({ method: 'GET', url: '/health/', headers: { host: 'testserver' } });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ status: 'unavailable', database: 'unavailable', redis: 'not configured' });
    expect(response.headers['cache-control']).toBe('no-store');
    // Only the three fields: no message, no stack, no address.
    expect(response.body).toBe('{"status":"unavailable","database":"unavailable","redis":"not configured"}');
  });

  it('is not served when the project turns it off', async () => {
    latchkey = await createTestLatchkey({ kind });
    const app = Fastify();
    await app.register(latchkey.plugin, { health: false });
    expect((await app.inject({ method: 'GET', url: '/health/', headers: { host: 'testserver' } })).statusCode).toBe(404);
  });
});

describe.runIf(testRedisUrl() !== undefined)('GET /health/ with Redis', () => {
  it('answers "redis": "ok" while the shared server answers PING', async () => {
    latchkey = await createTestLatchkey({ env: { REDIS_URL: testRedisUrl()! }, log: quiet });
    const answer = await health(await siteApp(latchkey));
    expect(answer).toMatchObject({ status: 200, body: { status: 'ok', database: 'ok', redis: 'ok' } });
  });

  it('answers 503 naming Redis once its server has stopped and its port is closed, and 200 again when it is back', async () => {
    redis = await TestRedisServer.start('health-s3cret');
    latchkey = await createTestLatchkey({ env: { REDIS_URL: redis.url }, log: quiet });
    const app = await siteApp(latchkey);
    expect((await health(app)).body.redis).toBe('ok');

    await redis.stop();
    const down = await health(app);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', database: 'ok', redis: 'unavailable' });
    expect(JSON.stringify(down.body)).not.toContain('health-s3cret');

    await redis.restart();
    // The client reconnects in the background (within a second); the check succeeds once it has.
    await expect.poll(async () => (await health(app)).status, { timeout: 10_000, interval: 100 }).toBe(200);
  });
});
