import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestLatchkey } from '@latchkey/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createProjectLatchkey } from './project.js';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

describe('the site in process', () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('serves the home page, naming the signed-in user', async () => {
    latchkey = await createProjectLatchkey();
    const app = await buildApp(latchkey);
    const anonymous = await app.inject({ url: '/', headers: { host: 'testserver' } });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.body).toContain('<h1>Test Site</h1>');
    expect(anonymous.body).toContain('You are not signed in.');

    const user = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    const session = await latchkey.sessions.startSignedIn(user);
    const signedIn = await app.inject({ url: '/', headers: { host: 'testserver' }, cookies: { sessionid: session.cookieValue } });
    expect(signedIn.body).toContain('Signed in as ada.');
    expect(signedIn.headers['cache-control']).toBe('no-store');
  });

  it('refuses a Host header outside ALLOWED_HOSTS', async () => {
    latchkey = await createProjectLatchkey();
    const app = await buildApp(latchkey);
    expect((await app.inject({ url: '/', headers: { host: 'evil.example' } })).statusCode).toBe(400);
  });

  it('answers the health check, also to a load balancer that calls by IP address', async () => {
    latchkey = await createProjectLatchkey();
    const app = await buildApp(latchkey);
    const response = await app.inject({ url: '/health/', headers: { host: '10.0.0.7:8000' } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: 'ok', redis: 'not configured' });
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('sends Strict-Transport-Security on HTTPS requests from its proxy when SECURE_HSTS_SECONDS is set', async () => {
    latchkey = await createProjectLatchkey({ settings: { SECURE_HSTS_SECONDS: 31_536_000, TRUST_PROXY_HOPS: 1 } });
    const app = await buildApp(latchkey);
    const overHttps = await app.inject({ url: '/', headers: { host: 'testserver', 'x-forwarded-proto': 'https' } });
    expect(overHttps.headers['strict-transport-security']).toBe('max-age=31536000');
    const overHttp = await app.inject({ url: '/', headers: { host: 'testserver' } });
    expect(overHttp.headers['strict-transport-security']).toBeUndefined();
  });

  it('logs requests with the keys of mailed links redacted', async () => {
    latchkey = await createProjectLatchkey();
    const lines: string[] = [];
    const app = await buildApp(latchkey, { logger: { stream: { write: (line: string) => lines.push(line) } } });
    await app.inject({ url: '/accounts/password/reset/key/MQ-a-live-reset-key/', headers: { host: 'testserver', authorization: 'Token a-live-api-token' } });
    const log = lines.join('');
    expect(log).toContain('"url":"/accounts/password/reset/key/[redacted]/"');
    expect(log).not.toContain('a-live-reset-key');
    expect(log).not.toContain('a-live-api-token');
  });

  it('on close, finishes the request in flight, then closes the database', async () => {
    latchkey = await createProjectLatchkey();
    const app = await buildApp(latchkey);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    app.get('/slow', async () => {
      started();
      await released;
      return { finished: true };
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const inFlight = fetch(`${address}/slow`, { headers: { host: 'localhost' } });
    await handlerStarted;
    const closing = app.close();
    release();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ finished: true });
    await closing;
    await expect(latchkey.users.count()).rejects.toThrow();
  });
});

interface RunningServer {
  exited: Promise<{ code: number | null; stderr: string; stdout: string }>;
  url: Promise<string>;
  kill(signal: NodeJS.Signals): void;
}

/**
 * Runs the server as `npm run dev` and `npm start` do (node --import tsx src/server.ts), as a separate
 * process. Without npm in between, the exit status seen is the server's own.
 */
function startServer(mode: 'local' | 'production', env: Record<string, string>): RunningServer {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: mode === 'local' ? 'development' : 'production', PORT: '0', ...env },
  });
  let stdout = '';
  let stderr = '';
  let resolveUrl!: (url: string) => void;
  const url = new Promise<string>((resolve) => (resolveUrl = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
    if (match) resolveUrl(match[1]!);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stderr, stdout })),
  );
  return { exited, url, kill: (signal) => child.kill(signal) };
}

describe('the server, as npm run dev and npm start run it', () => {
  it('in local mode migrates and serves the home page from SQLite, and on SIGTERM exits cleanly with the database closed', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'lk-site-'));
    const database = join(directory, 'db.sqlite3');
    const server = startServer('local', { DATABASE_URL: `sqlite:${database}` });
    const url = await Promise.race([server.url, server.exited.then((result) => Promise.reject(new Error(result.stderr)))]);
    const response = await fetch(`${url}/`, { headers: { host: 'localhost:8000' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<h1>My Awesome Project</h1>');
    // In the language the browser asks for: the project's own words from its catalogs (locale/).
    const french = await fetch(`${url}/`, { headers: { host: 'localhost:8000', 'accept-language': 'fr' } });
    expect(await french.text()).toMatch(/<html lang="fr"[^>]*>[\s\S]*<title>Accueil · [\s\S]*<p>Vous n’êtes pas connecté\.<\/p>/);
    expect(existsSync(`${database}-wal`)).toBe(true);
    server.kill('SIGTERM');
    const result = await server.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('SIGTERM received');
    // One banner says where everything is (PORT=0 here: SITE_URL keeps its default).
    expect(result.stdout).toContain('My Awesome Project (local mode)\n  site     http://localhost:8000/\n  admin    http://localhost:8000/admin/\n  mail     printed in this console');
    // SQLite removes the write-ahead log when the last connection closes cleanly.
    expect(existsSync(`${database}-wal`)).toBe(false);
  });

  it('fails with one clear line and a non-zero exit when PostgreSQL is unreachable', async () => {
    const server = startServer('local', { DATABASE_URL: 'postgres://app:secret@127.0.0.1:1/app', LATCHKEY_SECRET_KEY: 'test-only-secret-key' });
    const result = await server.exited;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: .*127\.0\.0\.1:1.*\n$/);
    expect(result.stderr).not.toContain('secret');
  });

  it('fails with one line naming PORT when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const directory = mkdtempSync(join(tmpdir(), 'lk-site-'));
      const server = startServer('local', { DATABASE_URL: `sqlite:${join(directory, 'db.sqlite3')}`, PORT: String(port), HOST: '127.0.0.1' });
      const result = await server.exited;
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`Error: Port ${port} on 127.0.0.1 is already in use: stop what is listening there, or set PORT to another port.\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('in production refuses to start without its required settings', async () => {
    const server = startServer('production', {});
    const result = await server.exited;
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Error: Production needs these environment variables: LATCHKEY_SECRET_KEY, DATABASE_URL, EMAIL_URL, LATCHKEY_ADMIN_URL.\n',
    );
  });
});
