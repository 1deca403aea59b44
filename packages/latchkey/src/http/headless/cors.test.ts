import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';
const FRONT_END = 'https://app.example.com';
const FOREIGN = 'https://evil.example';
const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers'];

describe.each(testDatabaseKinds())('CORS and CSRF for front ends on other origins, on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(origins: string[]): Promise<FastifyInstance> {
    latchkey = await createTestLatchkey({ kind, settings: { CORS_ALLOWED_ORIGINS: origins } });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    return HeadlessTestClient.createApp(latchkey);
  }

  /** A browser's preflight before a cross-origin JSON POST with the API's headers. */
  function preflight(app: FastifyInstance, origin: string, path = '/_allauth/browser/v1/auth/login') {
    return app.inject({
      method: 'OPTIONS',
      url: path,
      headers: { host: 'testserver', origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-csrftoken' },
    });
  }

  function corsHeadersOf(headers: Record<string, unknown>): string[] {
    return CORS_HEADERS.filter((name) => headers[name] !== undefined);
  }

  it('lets an allowed origin read answers with credentials, and says which headers it may send', async () => {
    const app = await setUp([FRONT_END, 'http://localhost:5173']);
    const config = await app.inject({ url: '/_allauth/browser/v1/config', headers: { host: 'testserver', origin: FRONT_END } });
    expect(config.statusCode).toBe(200);
    expect(config.headers['access-control-allow-origin']).toBe(FRONT_END);
    expect(config.headers['access-control-allow-credentials']).toBe('true');
    expect(config.headers['access-control-expose-headers']).toBe('retry-after');
    expect(config.headers.vary).toContain('Origin');

    for (const path of ['/_allauth/browser/v1/auth/login', '/_allauth/app/v1/auth/password/reset', '/_allauth/openapi.json']) {
      const answer = await preflight(app, FRONT_END, path);
      expect(answer.statusCode).toBe(204);
      expect(answer.headers['access-control-allow-origin']).toBe(FRONT_END);
      expect(answer.headers['access-control-allow-credentials']).toBe('true');
      const methods = String(answer.headers['access-control-allow-methods']).split(/,\s*/);
      expect(methods).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']));
      const allowed = String(answer.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['x-session-token', 'x-email-verification-key', 'x-password-reset-key', 'x-csrftoken', 'content-type']));
      expect(Number(answer.headers['access-control-max-age'])).toBeGreaterThan(0);
    }
    // Each allowed origin is answered with itself, never with the list or a wildcard.
    expect((await preflight(app, 'http://localhost:5173')).headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('gives any other origin none of them: not a foreign site, not a look-alike, not "null"', async () => {
    const app = await setUp([FRONT_END]);
    for (const origin of [FOREIGN, 'https://app.example.com.evil.example', 'http://app.example.com', 'https://app.example.com:8443', 'null']) {
      const config = await app.inject({ url: '/_allauth/browser/v1/config', headers: { host: 'testserver', origin } });
      expect(config.statusCode).toBe(200);
      expect(corsHeadersOf(config.headers), origin).toEqual([]);
      expect(corsHeadersOf((await preflight(app, origin)).headers), origin).toEqual([]);
    }
  });

  it('gives nobody them by default', async () => {
    const app = await setUp([]);
    expect(latchkey.settings.CORS_ALLOWED_ORIGINS).toEqual([]);
    const config = await app.inject({ url: '/_allauth/browser/v1/config', headers: { host: 'testserver', origin: FRONT_END } });
    expect(corsHeadersOf(config.headers)).toEqual([]);
    expect(corsHeadersOf((await preflight(app, FRONT_END)).headers)).toEqual([]);
  });

  it("passes an allowed origin's POST with the CSRF token through the CSRF check, and refuses a foreign origin's", async () => {
    const app = await setUp([FRONT_END]);
    const browser = new HeadlessTestClient(app, 'browser', latchkey);
    const credentials = { username: 'ada', password: PASSWORD };

    const foreign = await browser.post('/auth/login', credentials, { headers: { origin: FOREIGN } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors?.[0]).toMatchObject({ code: 'csrf_failed' });
    expect(corsHeadersOf(foreign.headers)).toEqual([]);
    // An allowed origin is trusted as an origin, not instead of the token.
    const tokenless = await browser.post('/auth/login', credentials, { headers: { origin: FRONT_END }, csrf: false });
    expect(tokenless.status).toBe(403);
    expect((await browser.get('/auth/session')).status).toBe(401);

    const allowed = await browser.post('/auth/login', credentials, { headers: { origin: FRONT_END, 'sec-fetch-site': 'same-site' } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe(FRONT_END);
    expect((await browser.get('/auth/session')).status).toBe(200);
  });

  it('refuses a foreign origin even when CORS_ALLOWED_ORIGINS is empty, and trusts no origin it does not list', async () => {
    const app = await setUp([]);
    const browser = new HeadlessTestClient(app, 'browser', latchkey);
    const response = await browser.post('/auth/login', { username: 'ada', password: PASSWORD }, { headers: { origin: FRONT_END } });
    expect(response.status).toBe(403);
    expect((await browser.get('/auth/session')).status).toBe(401);
  });
});
