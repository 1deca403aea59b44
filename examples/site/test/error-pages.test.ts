/**
 * The site's error pages as src/app.ts wires them: an unknown URL is the 404 page in the site's
 * layout for a browser, JSON for a JSON client; a page of yours in templates/ (404.html, 500.html)
 * would replace Latchkey's.
 */
import type { TestLatchkey } from '@latchkey/core/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createProjectLatchkey } from './project.js';

describe('error pages', () => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<void> {
    latchkey = await createProjectLatchkey();
    app = await buildApp(latchkey);
    await app.ready();
  }

  it('shows a browser the 404 page in the layout, with the site name and a link home', async () => {
    await setUp();
    const page = await app.inject({ url: '/no/such/page/', headers: { host: 'testserver', accept: 'text/html' } });
    expect(page.statusCode).toBe(404);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(`<a class="lk-brand" href="/">${latchkey.settings.SITE_NAME}</a>`);
    expect(page.body).toContain('Page not found (404)');
    expect(page.body).toContain('<a href="/">Go to the home page</a>');
  });

  it('answers a JSON client in JSON', async () => {
    await setUp();
    const answer = await app.inject({ url: '/no/such/page/', headers: { host: 'testserver', accept: 'application/json' } });
    expect(answer.statusCode).toBe(404);
    expect(answer.json()).toEqual({ detail: 'Not found.' });
  });
});
