/**
 * How the example site serves its single-page app (spa/): the files, the headers that keep
 * injected scripts from running and the page from being framed, and the rules the app's own code
 * keeps (no inline script or style, no HTML built from strings). The app's journeys run in
 * Chromium in e2e/headless-spa.test.ts and e2e/headless-social.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type TestLatchkey } from '@latchkey/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { Browser, csrfTokenOf } from './browser.js';
import { createProjectLatchkey } from './project.js';

const spaDirectory = fileURLToPath(new URL('../spa/', import.meta.url));
const CSP = "default-src 'self'; frame-ancestors 'none'";
const API = '/_allauth/browser/v1';
/** allauth's dummy provider: a stand-in identity provider on the site itself, for tests. */
const DUMMY = { dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] } };

describe('the single-page app as the site serves it', () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function site(settings = {}) {
    latchkey = await createProjectLatchkey({ settings });
    return buildApp(latchkey);
  }

  it('serves its page at /spa/ under a policy that allows only this origin and no framing', async () => {
    const app = await site();
    const page = await app.inject({ url: '/spa/', headers: { host: 'testserver' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(CSP);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.body).toContain('<script type="module" src="app.js"></script>');
    // The header names the project, as the site's own pages do.
    expect(page.body).toContain('<a class="brand" href="#/">%%project_name%% <span class="brand-note">single-page app</span></a>');

    const redirect = await app.inject({ url: '/spa', headers: { host: 'testserver' } });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/spa/');
  });

  it('serves every script and the stylesheet with their types and the same policy', async () => {
    const app = await site();
    for (const file of readdirSync(spaDirectory).filter((name) => name !== 'index.html')) {
      const response = await app.inject({ url: `/spa/${file}`, headers: { host: 'testserver' } });
      expect(response.statusCode, file).toBe(200);
      expect(response.headers['content-type'], file).toMatch(file.endsWith('.js') ? /^(text|application)\/javascript/ : /^text\/css/);
      expect(response.headers['content-security-policy'], file).toBe(CSP);
    }
    expect((await app.inject({ url: '/spa/../package.json', headers: { host: 'testserver' } })).statusCode).not.toBe(200);
    expect((await app.inject({ url: '/spa/missing.js', headers: { host: 'testserver' } })).statusCode).toBe(404);
  });

  it("sends the app's provider form to the provider, and a failure back to the app's route with the error before the fragment", async () => {
    const browser = new Browser(await site({ SOCIALACCOUNT_PROVIDERS: DUMMY }));
    const config = await browser.get(`${API}/config`);
    expect(config.json()).toMatchObject({ data: { socialaccount: { providers: [{ id: 'dummy', name: 'Dummy', flows: ['provider_redirect'] }] } } });
    // What spa/provider-views.js posts: the route in the fragment of a path on this site.
    const route = '/spa/#/provider/callback/login';
    const form = (provider: string): [string, string][] => [
      ['provider', provider],
      ['process', 'login'],
      ['callback_url', route],
      ['csrfmiddlewaretoken', browser.cookies.get('csrftoken') ?? ''],
    ];
    const started = await browser.post(`${API}/auth/provider/redirect`, form('dummy'));
    expect(started.statusCode).toBe(302);
    const authorize = new URL(started.headers.location as string);
    expect(authorize.pathname).toBe('/accounts/dummy/authenticate/');

    // The person cancels at the provider: back to the app's route, the error in the query before the fragment.
    const page = await browser.get(authorize.pathname + authorize.search);
    const answered = await browser.post(authorize.pathname, [
      ['csrfmiddlewaretoken', csrfTokenOf(page.body)],
      ['state', authorize.searchParams.get('state')!],
      ['redirect_uri', authorize.searchParams.get('redirect_uri')!],
      ['action', 'cancel'],
    ]);
    const callback = new URL(answered.headers.location as string);
    const back = await browser.get(callback.pathname + callback.search);
    expect(back.statusCode).toBe(302);
    expect(back.headers.location).toBe('/spa/?error=cancelled&error_process=login#/provider/callback/login');

    // A provider that is not configured never leaves the site.
    const unknown = await browser.post(`${API}/auth/provider/redirect`, form('nope'));
    expect(unknown.statusCode).toBe(302);
    expect(unknown.headers.location).toBe('/spa/?error=unknown&error_process=login#/provider/callback/login');
  });

  it('keeps to what the policy allows and never parses data as HTML', () => {
    const html = readFileSync(join(spaDirectory, 'index.html'), 'utf8');
    // Every script is a file; no inline handler or style attribute, which the policy would block.
    expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script type="module" src="app.js">']);
    expect(html).not.toMatch(/\son[a-z]+=|\sstyle=/i);
    for (const file of readdirSync(spaDirectory).filter((name) => name.endsWith('.js'))) {
      const source = readFileSync(join(spaDirectory, file), 'utf8');
      expect(source, file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
      // Only same-origin paths: no CDN, no other host.
      expect(source, file).not.toMatch(/https?:\/\//);
    }
  });
});
