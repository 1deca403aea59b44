/**
 * What a Fastify app with Latchkey's logger options writes, read from its log stream: no key,
 * code or token of a URL, and no credential-bearing header, whoever writes the line.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConsoleMailer } from '../../mail/console-mailer.js';
import { logDestination, loggerOptions } from './logger-options.js';

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

/** What a project's server writes in each mode: loggerOptions' serializers, through logDestination. */
async function serverLog(environment: 'local' | 'production', options: { tty?: boolean } = {}): Promise<{ app: FastifyInstance; written: () => string }> {
  let text = '';
  // A terminal, written to by the log and by the console mailer.
  const output = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    }),
    { isTTY: options.tty },
  );
  const settings = { HEADLESS_FRONTEND_URLS: {}, ENVIRONMENT: environment } as const;
  const app = Fastify({ logger: { ...loggerOptions(settings), stream: logDestination(settings, output) } });
  app.get('/accounts/password/reset/key/:key/', () => ({ ok: true }));
  app.post('/accounts/signup/', async () => {
    // The console mailer writes to the same terminal while the request runs.
    await new ConsoleMailer({ defaultFrom: 'webmaster@localhost', output }).send({ to: ['ada@example.com'], subject: 'Confirm your email', text: 'Open the link.\n' });
    return { ok: true };
  });
  app.get('/slow-down/', (request, reply) => {
    request.log.warn({ retryAfter: 30 }, 'too many attempts from one address');
    return reply.code(429).send({ ok: false });
  });
  app.get('/fails/', (request) => {
    throw new Error(`could not handle ${request.url}`);
  });
  await app.ready();
  return { app, written: () => text };
}

describe('the log in local mode', () => {
  it('is one readable line per request: method, redacted URL, status and time', async () => {
    const { app, written } = await serverLog('local');
    await app.inject({ url: `/accounts/password/reset/key/${RESET_KEY}/?next=%2Fhome%2F&token=${TOKEN}`, headers: { cookie: `sessionid=${SESSION}`, authorization: `Token ${TOKEN}` } });
    await app.inject({ url: '/no-such-page/' });
    const lines = written().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d GET \/accounts\/password\/reset\/key\/\[redacted\]\/\?next=%2Fhome%2F&token=\[redacted\] 200 \d+ms$/);
    expect(lines.at(-1)).toMatch(/^\d\d:\d\d:\d\d GET \/no-such-page\/ 404 \d+ms$/);
    expect(written()).not.toContain('{');
    for (const secret of [RESET_KEY, TOKEN, SESSION]) expect(written()).not.toContain(secret);
  });

  it('keeps a mail the console mailer prints whole, before the line of the request that sent it', async () => {
    const { app, written } = await serverLog('local');
    await app.inject({ method: 'POST', url: '/accounts/signup/' });
    expect(written()).toMatch(/^From: webmaster@localhost\nTo: ada@example.com\nSubject: Confirm your email\n\nOpen the link\.\n-{79}\n\d\d:\d\d:\d\d POST \/accounts\/signup\/ 200 \d+ms\n$/);
  });

  it('marks warnings and errors, with the error\'s redacted stack under it, and colours them on a terminal only', async () => {
    const { app, written } = await serverLog('local');
    await app.inject({ url: '/slow-down/' });
    await app.inject({ url: `/fails/?code=${TOKEN}` });
    const log = written();
    expect(log).toMatch(/^\d\d:\d\d:\d\d WARN too many attempts from one address \{"retryAfter":30\}\n\d\d:\d\d:\d\d GET \/slow-down\/ 429 \d+ms\n/);
    expect(log).toMatch(/\n\d\d:\d\d:\d\d ERROR could not handle \/fails\/\?code=\[redacted\]\n {4}Error: could not handle \/fails\/\?code=\[redacted\]\n {4}at /);
    expect(log).toMatch(/\n\d\d:\d\d:\d\d GET \/fails\/\?code=\[redacted\] 500 \d+ms\n$/);
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain('\x1b[');

    const terminal = await serverLog('local', { tty: true });
    await terminal.app.inject({ url: `/fails/` });
    expect(terminal.written()).toContain('\x1b[31mERROR\x1b[0m could not handle /fails/');
    expect(terminal.written().trimEnd().split('\n').at(-1)).toContain('GET /fails/ \x1b[31m500\x1b[0m ');
  });
});

describe('the log in production', () => {
  it('is pino\'s JSON lines, with the same redaction', async () => {
    const { app, written } = await serverLog('production');
    await app.inject({ url: `/accounts/password/reset/key/${RESET_KEY}/?token=${TOKEN}`, headers: { cookie: `sessionid=${SESSION}` } });
    const records = written().trimEnd().split('\n').map((line) => JSON.parse(line) as { msg: string; req?: Record<string, unknown>; res?: { statusCode: number } });
    expect(records.map((record) => record.msg)).toEqual(['incoming request', 'request completed']);
    expect(records[0]!.req).toEqual({ method: 'GET', url: '/accounts/password/reset/key/[redacted]/?token=[redacted]', host: 'localhost:80', remoteAddress: '127.0.0.1' });
    expect(records[1]!.res).toEqual({ statusCode: 200 });
    for (const secret of [RESET_KEY, TOKEN, SESSION]) expect(written()).not.toContain(secret);
  });
});
