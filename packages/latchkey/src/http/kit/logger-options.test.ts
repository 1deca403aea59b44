/**
 * What a Fastify app with Latchkey's logger options writes, read from its log stream: no key,
 * code or token of a URL, and no credential-bearing header, whoever writes the line.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { loggerOptions } from './logger-options.js';

const RESET_KEY = 'Mw:1u2Qxx:resetKEYsecret_9f8e7d';
const TOKEN = 'a3f1c2e9d8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3';
const SESSION = 'sessionSECRETvalue_0123456789abcdefghij';

async function loggingApp(): Promise<{ app: FastifyInstance; lines: string[] }> {
  const lines: string[] = [];
  const app = Fastify({
    logger: { ...loggerOptions({ HEADLESS_FRONTEND_URLS: { account_confirm_email: 'https://acme.example/app/verify/{key}' } }), stream: { write: (line: string) => lines.push(line) } },
  });
  app.get('/accounts/password/reset/key/:key/', () => ({ ok: true }));
  app.get('/echo-headers/', (request) => {
    // What a project might write while debugging.
    request.log.info({ headers: request.headers, url: request.url }, 'debugging');
    return { ok: true };
  });
  app.get('/fails/', (request) => {
    throw new Error(`could not handle ${request.url}`);
  });
  await app.ready();
  return { app, lines };
}

describe('request logging with loggerOptions', () => {
  it('logs a reset link with its key redacted, and the route still readable', async () => {
    const { app, lines } = await loggingApp();
    await app.inject({ url: `/accounts/password/reset/key/${RESET_KEY}/?next=%2Fhome%2F` });
    const log = lines.join('');
    expect(log).not.toContain(RESET_KEY);
    const incoming = lines.map((line) => JSON.parse(line) as { msg: string; req?: Record<string, unknown> }).find((line) => line.msg === 'incoming request');
    expect(incoming?.req).toEqual({ method: 'GET', url: '/accounts/password/reset/key/[redacted]/?next=%2Fhome%2F', host: 'localhost:80', remoteAddress: '127.0.0.1' });
  });

  it("redacts the key in Fastify's not-found line, and a front end's keyed route", async () => {
    const { app, lines } = await loggingApp();
    expect((await app.inject({ url: `/accounts/confirm-email/${RESET_KEY}` })).statusCode).toBe(404);
    await app.inject({ url: `/app/verify/${RESET_KEY}` });
    const log = lines.join('');
    expect(log).not.toContain(RESET_KEY);
    expect(log).toContain('Route GET:/accounts/confirm-email/[redacted] not found');
    expect(log).toContain('"url":"/app/verify/[redacted]"');
  });

  it('never writes Authorization, Cookie or X-Session-Token, even when a project logs the headers', async () => {
    const { app, lines } = await loggingApp();
    await app.inject({
      url: `/echo-headers/?token=${TOKEN}`,
      headers: { authorization: `Token ${TOKEN}`, cookie: `sessionid=${SESSION}`, 'x-session-token': SESSION, 'x-password-reset-key': RESET_KEY, 'user-agent': 'curl/8' },
    });
    const log = lines.join('');
    for (const secret of [TOKEN, SESSION, RESET_KEY]) expect(log).not.toContain(secret);
    const debugging = lines.map((line) => JSON.parse(line) as { msg: string; headers?: Record<string, string>; url?: string }).find((line) => line.msg === 'debugging');
    expect(debugging?.headers).toMatchObject({ authorization: '[redacted]', cookie: '[redacted]', 'x-session-token': '[redacted]', 'x-password-reset-key': '[redacted]', 'user-agent': 'curl/8' });
    expect(debugging?.url).toBe('/echo-headers/?token=[redacted]');
    // The request line itself carries no headers at all.
    const incoming = lines.map((line) => JSON.parse(line) as { msg: string; req?: Record<string, unknown> }).find((line) => line.msg === 'incoming request');
    expect(Object.keys(incoming?.req ?? {})).toEqual(['method', 'url', 'host', 'remoteAddress']);
  });

  it("redacts URLs in an error's message and stack", async () => {
    const { app, lines } = await loggingApp();
    expect((await app.inject({ url: `/fails/?code=${TOKEN}` })).statusCode).toBe(500);
    const log = lines.join('');
    expect(log).not.toContain(TOKEN);
    expect(log).toContain('could not handle /fails/?code=[redacted]');
  });
});
