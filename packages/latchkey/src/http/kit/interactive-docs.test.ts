/**
 * The interactive API docs, /api/docs/ and /_allauth/openapi.html: a visitor is sent to the login
 * and back, a signed-in user who is not staff gets 403, and staff get Swagger UI, every file of
 * which comes from this site, under a policy that allows no other origin.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews } from '../../testing/api.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';
const PAGES = [
  { page: '/api/docs/', document: '/api/schema/' },
  { page: '/_allauth/openapi.html', document: '/_allauth/openapi.json' },
];

/** Every address the page's markup names (src, href), unescaped. */
function addressesOf(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href|data-document-url)="([^"]*)"/g)].map((match) => match[1]!.replace(/&#38;/g, '&'));
}

/** The sources a Content-Security-Policy allows, other than this site's own and inline images. */
function foreignSources(policy: string): string[] {
  return policy
    .split(';')
    .flatMap((directive) => directive.trim().split(/\s+/).slice(1))
    .filter((source) => !["'self'", "'none'", 'data:'].includes(source));
}

describe.each(testDatabaseKinds())('the interactive API docs on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<ApiTestClient> {
    latchkey = await createTestLatchkey({ kind, settings: { HEADLESS_SERVE_SPECIFICATION: true, SITE_NAME: 'Example & Co', ...settings } });
    app = await createApiTestApp(latchkey, { routes: registerTestApiViews, headless: true });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true, isStaff: true });
    return new ApiTestClient(app, latchkey);
  }

  it.each(PAGES)('sends a visitor of $page to the login, which brings them back', async ({ page }) => {
    const visitor = await setUp();
    const response = await visitor.request('GET', page);
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(`/accounts/login/?next=${encodeURIComponent(page)}`);
    expect(response.body).not.toContain('swagger');
  });

  it.each(PAGES)('answers 403 to a signed-in user of $page who is not staff', async ({ page }) => {
    const ada = await setUp();
    await ada.logIn('ada', PASSWORD);
    const response = await ada.request('GET', page);
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('403 Forbidden');
    expect(response.body).not.toContain('swagger');
  });

  it.each(PAGES)('shows staff $page as Swagger UI, loading only files of this site, under a policy that allows no other origin', async ({ page, document }) => {
    const grace = await setUp();
    await grace.logIn('grace', PASSWORD);
    const response = await grace.request('GET', page);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    const policy = String(response.headers['content-security-policy']);
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(foreignSources(policy)).toEqual([]);
    // No inline script or style: the policy would refuse them, so the page must not need them.
    expect(response.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|\sstyle=|<style|\son[a-z]+=/i);
    expect(response.body).toContain('Example &#38; Co');
    const addresses = addressesOf(response.body);
    expect(addresses).toEqual(expect.arrayContaining(['/static/latchkey/swagger-ui/swagger-ui-bundle.js', '/static/latchkey/swagger-ui/swagger-ui.css', '/static/latchkey/api-docs.js', document]));
    for (const address of addresses) {
      // Same origin: a path of this site, never another host (`//host` or `scheme:`).
      expect(address, address).toMatch(/^\/(?!\/)/);
      const fetched: LightMyRequestResponse = await grace.request('GET', address);
      expect(fetched.statusCode, address).toBe(200);
    }
    expect((await grace.request('GET', '/static/latchkey/swagger-ui/swagger-ui-bundle.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    // The page makes sure the browser holds the CSRF cookie that "Try it out" copies into X-CSRFToken.
    expect(grace.cookies.get('csrftoken')).toBeTruthy();
  });

  it('lets "Try it out" change something with the session and the CSRF header, as the page\'s script sends it', async () => {
    const grace = await setUp();
    await grace.logIn('grace', PASSWORD);
    await grace.request('GET', '/_allauth/openapi.html');
    // Without the header a session's change is refused; with the cookie's value in it, it passes.
    expect((await grace.request('DELETE', '/_allauth/browser/v1/auth/session')).statusCode).toBe(403);
    expect((await grace.request('DELETE', '/_allauth/browser/v1/auth/session', { csrf: true })).statusCode).toBe(401);
  });

  it('serves no Swagger UI file but its script and stylesheet', async () => {
    const client = await setUp();
    for (const file of ['index.html', 'swagger-initializer.js', 'package.json', '../package.json']) {
      expect((await client.request('GET', `/static/latchkey/swagger-ui/${file}`)).statusCode, file).toBe(404);
    }
  });

  it('answers a visitor 403 under HEADLESS_ONLY, where there is no login page to send them to', async () => {
    const visitor = await setUp({ HEADLESS_ONLY: true, HEADLESS_FRONTEND_URLS: { account_confirm_email: 'https://app.example.com/verify/{key}', account_reset_password_from_key: 'https://app.example.com/reset/{key}' } });
    const response = await visitor.request('GET', '/_allauth/openapi.html');
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('front end');
  });
});
