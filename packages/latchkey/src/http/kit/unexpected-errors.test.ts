import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

describe("errors on Latchkey's routes", () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function app() {
    latchkey = await createTestLatchkey();
    const app = Fastify();
    await app.register(latchkey.plugin, {
      routes(scope) {
        scope.get('/broken', () => {
          throw new Error('SQLITE_ERROR: no such table: latchkey_sessions at /srv/app/db.sqlite3');
        });
        scope.post('/json', { config: { csrf: false } }, () => ({ ok: true }));
        // What a query meets while PostgreSQL restarts.
        scope.get('/database-away', () => {
          throw Object.assign(new Error('terminating connection due to administrator command on 10.0.0.5:5432'), { code: '57P01' });
        });
      },
    });
    return app;
  }

  it('answers an unexpected failure with a generic 500 that names nothing internal', async () => {
    const server = await app();
    const html = await server.inject({ url: '/broken' });
    expect(html.statusCode).toBe(500);
    expect(html.headers['cache-control']).toBe('no-store');
    expect(html.body).toContain('Server Error (500)');
    expect(html.body).not.toMatch(/SQLITE|latchkey_sessions|\/srv/);
    const json = await server.inject({ url: '/broken', headers: { accept: 'application/json' } });
    expect(json.json()).toEqual({ detail: 'A server error occurred.' });
  });

  it('answers a database that is away for a moment with a generic 503, naming nothing internal', async () => {
    const server = await app();
    const html = await server.inject({ url: '/database-away' });
    expect(html.statusCode).toBe(503);
    expect(html.headers['cache-control']).toBe('no-store');
    expect(html.body).toContain('Service Unavailable (503)');
    expect(html.body).not.toMatch(/administrator|10\.0\.0\.5|5432/);
    const json = await server.inject({ url: '/database-away', headers: { accept: 'application/json' } });
    expect(json.json()).toEqual({ detail: 'The service is temporarily unavailable. Please try again in a moment.' });
  });

  it('keeps the status and message of bad input: malformed JSON is a 400, an unknown media type a 415', async () => {
    const server = await app();
    const malformed = await server.inject({ method: 'POST', url: '/json', payload: '{"password":', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<{ detail: string }>().detail).toMatch(/JSON/);
    const unknown = await server.inject({ method: 'POST', url: '/json', payload: 'x', headers: { 'content-type': 'application/x-unknown' } });
    expect(unknown.statusCode).toBe(415);
  });
});
