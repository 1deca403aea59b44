/**
 * The site's error pages through an app mounted as a generated project mounts Latchkey: the
 * allowed-hosts guard on the whole app, `latchkey.notFoundHandler` and `latchkey.errorHandler`
 * set on it, the headless API and /api/ on. What a browser, a JSON client and the log see.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { PageClient } from '../../testing/pages.js';
import { createTestLatchkey, PRODUCTION_TEST_ENV, type TestLatchkey, type TestLatchkeyOptions } from '../../testing/latchkey.js';

const BROWSER = { host: 'testserver', accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const JSON_CLIENT = { host: 'testserver', accept: 'application/json' };
const SECRET_CAUSE = 'SQLITE_ERROR: no such table: latchkey_sessions at /srv/app/db.sqlite3';

interface LogLine {
  level: number;
  msg: string;
  host?: string;
}

let latchkey: TestLatchkey | undefined;
afterEach(async () => {
  await latchkey?.destroy();
  latchkey = undefined;
});

async function siteApp(options: TestLatchkeyOptions = {}): Promise<{ app: FastifyInstance; log: () => LogLine[] }> {
  latchkey = await createTestLatchkey(options);
  const lines: string[] = [];
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } });
  app.addHook('onRequest', latchkey.allowedHostsGuard);
  app.setNotFoundHandler(latchkey.notFoundHandler);
  app.setErrorHandler(latchkey.errorHandler);
  await app.register(latchkey.plugin, {
    headless: true,
    api: {},
    routes(scope) {
      scope.get('/broken/', () => {
        throw new Error(SECRET_CAUSE);
      });
    },
  });
  // A route of the project's own, outside Latchkey's scope: the app's error handler answers for it.
  app.get('/outside/broken/', () => {
    throw new Error(SECRET_CAUSE);
  });
  await app.ready();
  return { app, log: () => lines.map((line) => JSON.parse(line) as LogLine) };
}

describe('an unknown URL', () => {
  it('with HEADLESS_ONLY, shows the 404 page without links to account pages that are not served', async () => {
    const { app } = await siteApp({
      settings: { HEADLESS_ONLY: true, HEADLESS_FRONTEND_URLS: { account_confirm_email: 'https://app.example.com/verify/{key}', account_reset_password_from_key: 'https://app.example.com/reset/{key}' } },
    });
    const response = await app.inject({ url: '/no/such/page/', headers: BROWSER });
    expect(response.statusCode).toBe(404);
    expect(response.body).toContain('<a class="lk-brand" href="/">');
    expect(response.body).not.toContain('/accounts/');
  });

  it("shows a browser the 404 page in the site's layout, with the site's name and a link home", async () => {
    const { app } = await siteApp();
    const response = await app.inject({ url: '/no/such/page/', headers: BROWSER });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('<title>Page not found · Test Site</title>');
    expect(response.body).toContain('<a class="lk-brand" href="/">Test Site</a>');
    expect(response.body).toContain('Page not found (404)');
    expect(response.body).toContain('<a href="/">Go to the home page</a>');
    expect(response.body).not.toContain('Route GET');
  });

  it('answers a JSON client in JSON', async () => {
    const { app } = await siteApp();
    const response = await app.inject({ url: '/no/such/page/', headers: JSON_CLIENT });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ detail: 'Not found.' });
  });

  it("logs Fastify's not-found line, as its own handler would", async () => {
    const { app, log } = await siteApp();
    await app.inject({ url: '/no/such/page/', headers: BROWSER });
    expect(log().filter((line) => line.msg === 'Route GET:/no/such/page/ not found')).toHaveLength(1);
  });

  it('keeps the JSON shapes of the headless API and of /api/, whatever the client accepts', async () => {
    const { app } = await siteApp();
    for (const headers of [BROWSER, JSON_CLIENT]) {
      const headless = await app.inject({ url: '/_allauth/browser/v1/no/such/route', headers });
      expect([headless.statusCode, headless.json()]).toEqual([404, { status: 404 }]);
      const api = await app.inject({ url: '/api/no/such/route/', headers });
      expect([api.statusCode, api.json()]).toEqual([404, { detail: 'Not found.' }]);
    }
  });

  it("shows the project's own 404.html when it has one, still in the layout", async () => {
    const projectTemplates = mkdtempSync(join(tmpdir(), 'lk-error-pages-'));
    writeFileSync(join(projectTemplates, '404.html'), '{% extends "account/base.html" %}{% block content %}<p id="ours">Nothing here at {{ site_name }}.</p>{% endblock %}');
    const { app } = await siteApp({ templateDirs: [projectTemplates] });
    const response = await app.inject({ url: '/no/such/page/', headers: BROWSER });
    expect(response.statusCode).toBe(404);
    expect(response.body).toContain('<p id="ours">Nothing here at Test Site.</p>');
    expect(response.body).toContain('<a class="lk-brand" href="/">Test Site</a>');
    expect(response.body).not.toContain('There is no page at this address');
  });
});

describe('a request that fails', () => {
  it("shows the 500 page in the layout, without the error's message, inside Latchkey's scope and outside it", async () => {
    const { app, log } = await siteApp();
    for (const url of ['/broken/', '/outside/broken/']) {
      const response = await app.inject({ url, headers: BROWSER });
      expect(response.statusCode, url).toBe(500);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).toContain('Server Error (500)');
      expect(response.body).toContain('<a class="lk-brand" href="/">Test Site</a>');
      expect(response.body).not.toMatch(/SQLITE|latchkey_sessions|\/srv\/|at .*\.ts/);
      const json = await app.inject({ url, headers: JSON_CLIENT });
      expect(json.json()).toEqual({ detail: 'A server error occurred.' });
    }
    // The cause is in the log, for the operator.
    expect(log().filter((line) => line.msg === 'request failed')).toHaveLength(4);
  });

  it('falls back to a minimal page, never a stack trace, when the 500 page itself cannot be rendered', async () => {
    const projectTemplates = mkdtempSync(join(tmpdir(), 'lk-error-pages-'));
    writeFileSync(join(projectTemplates, '500.html'), '{% extends "no/such/layout.html" %}');
    const { app, log } = await siteApp({ templateDirs: [projectTemplates] });
    const response = await app.inject({ url: '/broken/', headers: BROWSER });
    expect(response.statusCode).toBe(500);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('<h1>Server Error (500)</h1>');
    expect(response.body).not.toMatch(/SQLITE|no\/such\/layout|Template render error|at /);
    expect(log().some((line) => line.msg.startsWith('the error page 500.html could not be rendered'))).toBe(true);
  });

  it('answers a refused CSRF check with the 403 page in the layout, naming the reason', async () => {
    const { app } = await siteApp();
    const response = await app.inject({ method: 'POST', url: '/accounts/login/', payload: 'login=a&password=b', headers: { ...BROWSER, 'content-type': 'application/x-www-form-urlencoded' } });
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('403 Forbidden');
    expect(response.body).toContain('CSRF verification failed. Request aborted.');
    expect(response.body).toContain('CSRF cookie not set.');
    expect(response.body).toContain('<a class="lk-brand" href="/">Test Site</a>');
  });
});

describe('a page guard that refuses a signed-in user', () => {
  it('shows the 403 page in the layout as that user sees it', async () => {
    latchkey = await createTestLatchkey();
    const site = latchkey;
    const browser = await PageClient.create(site, { plugin: { routes: (scope) => void scope.get('/staff-only/', { preHandler: site.guards.staff }, () => 'secret') } });
    await createUser(site.deps, { username: 'ada', email: 'ada@example.com', password: 'correct horse battery', emailVerified: true });
    expect((await browser.post('/accounts/login/', { login: 'ada', password: 'correct horse battery' })).statusCode).toBe(302);
    const refused = await browser.get('/staff-only/');
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.body).toContain('403 Forbidden');
    expect(refused.body).toContain('You do not have permission to see this page.');
    expect(refused.body).toContain('Sign out');
    expect(refused.body).not.toContain('secret');
    await browser.close();
  });
});

describe('a request for a host outside ALLOWED_HOSTS', () => {
  it('writes one warning naming the host and the setting to change', async () => {
    const { app, log } = await siteApp();
    const response = await app.inject({ url: '/accounts/login/', headers: { ...BROWSER, host: 'shop.example:8443' } });
    expect(response.statusCode).toBe(400);
    const warnings = log().filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.host).toBe('shop.example:8443');
    expect(warnings[0]!.msg).toBe(
      'Invalid Host header "shop.example:8443": refused with 400; to serve this host, add "shop.example" to ALLOWED_HOSTS (LATCHKEY_ALLOWED_HOSTS).',
    );
  });

  it('shows the 400 page in production without the host or the allowed list, and links nothing to the refused host', async () => {
    const { app } = await siteApp({ env: { ...PRODUCTION_TEST_ENV, LATCHKEY_ALLOWED_HOSTS: 'testserver,internal-admin.example' } });
    const response = await app.inject({ url: '/', headers: { ...BROWSER, host: 'evil.example' } });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('Bad Request (400)');
    expect(response.body).toContain('<a class="lk-brand" href="/">Test Site</a>');
    expect(response.body).not.toMatch(/evil\.example|testserver|internal-admin|ALLOWED_HOSTS/);
  });

  it('names the setting on the page in local mode, the host escaped', async () => {
    const { app } = await siteApp({ env: { NODE_ENV: 'development', LATCHKEY_SECRET_KEY: 'k'.repeat(50), LATCHKEY_ALLOWED_HOSTS: 'localhost,127.0.0.1' } });
    const response = await app.inject({ url: '/', headers: { ...BROWSER, host: 'devbox.internal:8000' } });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('Invalid Host header &quot;devbox.internal:8000&quot;.');
    expect(response.body).toContain('add &quot;devbox.internal&quot; to ALLOWED_HOSTS: set LATCHKEY_ALLOWED_HOSTS=localhost,127.0.0.1,devbox.internal');
    const hostile = await app.inject({ url: '/', headers: { ...BROWSER, host: 'a<b>.example' } });
    expect(hostile.statusCode).toBe(400);
    expect(hostile.body).not.toContain('<b>');
  });

  it('answers a JSON client in JSON', async () => {
    const { app } = await siteApp();
    const response = await app.inject({ url: '/_allauth/browser/v1/config', headers: { ...JSON_CLIENT, host: 'evil.example' } });
    expect([response.statusCode, response.json()]).toEqual([400, { detail: 'Bad Request (400)' }]);
  });
});
