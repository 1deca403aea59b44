import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { csrfProtection, csrfToken, type CsrfOptions } from './csrf.js';

const options: CsrfOptions = { cookieSecure: false, siteUrl: 'http://localhost', trustedOrigins: ['https://app.example'] };
let app: FastifyInstance;
let writes: number;

beforeEach(async () => {
  writes = 0;
  app = Fastify({ trustProxy: true });
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);
  await app.register(async (scope) => {
    await scope.register(csrfProtection, options);
    scope.get('/form', (request, reply) => ({ token: csrfToken(request, reply, options) }));
    scope.post('/change', () => {
      writes++;
      return { ok: true };
    });
    scope.post('/app-client', { config: { csrf: false } }, () => ({ ok: true }));
  });
  app.post('/project-route', () => ({ ok: true }));
  await app.ready();
});

afterEach(() => app.close());

async function getToken(): Promise<{ token: string; cookie: string }> {
  const response = await app.inject({ method: 'GET', url: '/form' });
  const cookie = response.cookies.find((c) => c.name === 'csrftoken');
  expect(cookie).toMatchObject({ path: '/', sameSite: 'Lax' });
  expect(cookie?.httpOnly).toBeFalsy();
  return { token: response.json<{ token: string }>().token, cookie: cookie!.value };
}

function post(payload: string, headers: Record<string, string>) {
  return app.inject({ method: 'POST', url: '/change', payload, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
}

describe('CSRF protection on Latchkey routes', () => {
  it('accepts the token from the form field or the X-CSRFToken header', async () => {
    const { token, cookie } = await getToken();
    expect((await post(`csrfmiddlewaretoken=${token}`, { cookie: `csrftoken=${cookie}` })).statusCode).toBe(200);
    expect((await post('', { cookie: `csrftoken=${cookie}`, 'x-csrftoken': token, origin: 'http://localhost:80' })).statusCode).toBe(200);
    expect(writes).toBe(2);
  });

  it('refuses a missing token, a missing cookie or another session\'s token with 403 and runs nothing', async () => {
    const mine = await getToken();
    const theirs = await getToken();
    const attempts = [
      post('', { cookie: `csrftoken=${mine.cookie}` }),
      post(`csrfmiddlewaretoken=${mine.token}`, {}),
      post(`csrfmiddlewaretoken=${theirs.token}`, { cookie: `csrftoken=${mine.cookie}` }),
      post(`csrfmiddlewaretoken=`, { cookie: `csrftoken=${mine.cookie}` }),
      post(`csrfmiddlewaretoken=${mine.token}&csrfmiddlewaretoken=${mine.token}`, { cookie: `csrftoken=${mine.cookie}` }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('CSRF verification failed');
    }
    expect(writes).toBe(0);
  });

  it('refuses a foreign Origin, a null Origin and a browser-declared cross-site request even with a valid token', async () => {
    const { token, cookie } = await getToken();
    const valid = { cookie: `csrftoken=${cookie}`, 'x-csrftoken': token };
    const extras: Record<string, string>[] = [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }];
    for (const extra of extras) {
      expect((await post('', { ...valid, ...extra })).statusCode).toBe(403);
    }
    expect((await post('', { ...valid, origin: 'https://app.example' })).statusCode).toBe(200);
    expect(writes).toBe(1);
  });

  it('over HTTPS without Origin, requires a same-site Referer', async () => {
    const { token, cookie } = await getToken();
    const valid = { cookie: `csrftoken=${cookie}`, 'x-csrftoken': token, 'x-forwarded-proto': 'https' };
    expect((await post('', valid)).statusCode).toBe(403);
    expect((await post('', { ...valid, referer: 'https://evil.example/page' })).statusCode).toBe(403);
    expect((await post('', { ...valid, referer: 'https://localhost:80/accounts/login/' })).statusCode).toBe(200);
  });

  it('answers JSON requests in JSON', async () => {
    const response = await app.inject({ method: 'POST', url: '/change', payload: { a: 1 } });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ detail: 'CSRF Failed: CSRF cookie not set.' });
  });

  it('leaves routes that opt out and the project\'s own routes alone', async () => {
    expect((await app.inject({ method: 'POST', url: '/app-client' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/project-route' })).statusCode).toBe(200);
  });
});

describe('a trusted origin that does not parse', () => {
  it('is ignored, and does not make unparseable Origin headers pass', async () => {
    const bad: CsrfOptions = { cookieSecure: false, siteUrl: 'http://localhost', trustedOrigins: ['https://app.exa^mple.com'] };
    const server = Fastify();
    await server.register(fastifyCookie);
    await server.register(async (scope) => {
      await scope.register(csrfProtection, bad);
      scope.get('/form', (request, reply) => ({ token: csrfToken(request, reply, bad) }));
      scope.post('/change', () => ({ ok: true }));
    });
    const form = await server.inject({ url: '/form' });
    const cookie = form.cookies.find((c) => c.name === 'csrftoken')!.value;
    const token = form.json<{ token: string }>().token;
    for (const origin of ['null', 'garbage']) {
      const response = await server.inject({ method: 'POST', url: '/change', cookies: { csrftoken: cookie }, headers: { 'x-csrftoken': token, origin } });
      expect(response.statusCode, origin).toBe(403);
    }
    await server.close();
  });
});
