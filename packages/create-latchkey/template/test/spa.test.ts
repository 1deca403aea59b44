/**
 * How the example site serves its single-page app (spa/): the files, the headers that keep
 * injected scripts from running and the page from being framed, and the rules the app's own code
 * keeps (no inline script or style, no HTML built from strings). The app's journeys run in
 * Chromium in e2e/headless-spa.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestLatchkey, type TestLatchkey } from '@latchkey/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, TEMPLATE_DIRS } from '../src/app.js';

const spaDirectory = fileURLToPath(new URL('../spa/', import.meta.url));
const CSP = "default-src 'self'; frame-ancestors 'none'";

describe('the single-page app as the site serves it', () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function site() {
    latchkey = await createTestLatchkey({ templateDirs: TEMPLATE_DIRS });
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
