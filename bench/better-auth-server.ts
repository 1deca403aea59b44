/**
 * The better-auth half of bench/peers.ts: better-auth set up as its documentation sets it up for
 * a Node server, in its own process so that autocannon's CPU use (in the parent) is not counted
 * against it, just as bench/api-server.ts does for Latchkey.
 *
 * - HTTP: plain node:http with `toNodeHandler` from better-auth/node, the integration its docs
 *   give for Node (and for Express, which mounts the same handler). No framework sits in front,
 *   so no framework's cost is charged to better-auth.
 * - Database: better-sqlite3 on a file in a new temporary directory (removed on `stop`), its
 *   tables created by better-auth's own migration API (getMigrations).
 * - emailAndPassword enabled, the bearer() plugin, the rate limiter off (as Latchkey's account
 *   rate limits are off in bench/api-server.ts), telemetry off, a 48-byte random secret, and
 *   NODE_ENV=production set by the parent.
 * - One bare route on the same server, answering get-session's JSON for the benchmark's user with
 *   no authentication, so better-auth's own bare-vs-authenticated ratio can be printed.
 *
 * At start it signs up one user, signs in over HTTP to take the bearer token from the
 * `set-auth-token` header, checks that GET /api/auth/get-session with that token answers that
 * user, and tells the parent over IPC. It answers `cpu` with its CPU time, and on `stop` (or
 * when the parent goes away) removes its database and exits.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { toNodeHandler } from 'better-auth/node';
import { bearer } from 'better-auth/plugins';

const BENCH_EMAIL = 'bench@example.com';
const BENCH_PASSWORD = 'correct horse battery staple';
/** better-auth's default base path, under which every one of its routes is served. */
const AUTH_BASE_PATH = '/api/auth';
const SESSION_ROUTE = `${AUTH_BASE_PATH}/get-session`;
/** Answers the same JSON as get-session for the benchmark's user, with no authentication at all. */
const BARE_ROUTE = '/bench/bare/';

// The parent imports only these types: importing anything else would start a server in it.
/** What the parent asks. */
export type PeerParentMessage = { type: 'cpu' } | { type: 'stop' };

/** What the child answers. */
export type PeerChildMessage =
  | { type: 'ready'; port: number; bareRoute: string; sessionRoute: string; token: string; betterAuthVersion: string }
  /** process.cpuUsage() of the server: every thread's, the database driver's included. */
  | { type: 'cpu'; microseconds: number }
  | { type: 'failed'; message: string };

function send(message: PeerChildMessage): void {
  process.send?.(message);
}

/** The version of better-auth actually loaded (its package.json is not in its exports map). */
async function betterAuthVersion(): Promise<string> {
  const packageJson = new URL('../package.json', import.meta.resolve('better-auth'));
  return (JSON.parse(await readFile(packageJson, 'utf8')) as { version: string }).version;
}

function createAuth(database: Database.Database, baseURL: string) {
  return betterAuth({
    baseURL,
    basePath: AUTH_BASE_PATH,
    secret: randomBytes(48).toString('base64url'),
    database,
    emailAndPassword: { enabled: true },
    plugins: [bearer()],
    // Off, or the benchmark would measure the rate limiter (and be answered 429).
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
  });
}

async function start(): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'better-auth-bench-'));
  try {
    await serve(directory);
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
}

async function serve(directory: string): Promise<void> {
  const database = new Database(join(directory, 'db.sqlite3'));

  // Listen first: better-auth wants its base URL, which holds the port.
  let handle: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => {
    response.writeHead(503).end();
  };
  const server = createServer((request, response) => handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The server has no TCP port.');
  const base = `http://127.0.0.1:${address.port}`;

  const auth = createAuth(database, base);
  const { runMigrations } = await getMigrations(auth.options);
  await runMigrations();

  const authHandler = toNodeHandler(auth);
  let barePayload = '{}';
  handle = (request, response) => {
    if (request.method === 'GET' && request.url === BARE_ROUTE) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(barePayload);
      return;
    }
    authHandler(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  };

  // Sign up without HTTP (one scrypt hash, not measured), then sign in as a client would.
  await auth.api.signUpEmail({ body: { email: BENCH_EMAIL, password: BENCH_PASSWORD, name: 'Bench User' } });
  const signIn = await fetch(`${base}${AUTH_BASE_PATH}/sign-in/email`, {
    method: 'POST',
    // better-auth refuses a POST with no Origin (its CSRF check); its own base URL is trusted.
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email: BENCH_EMAIL, password: BENCH_PASSWORD }),
  });
  const token = signIn.headers.get('set-auth-token');
  if (signIn.status !== 200 || token === null) {
    throw new Error(`POST ${AUTH_BASE_PATH}/sign-in/email answered ${signIn.status} without set-auth-token: ${(await signIn.text()).slice(0, 200)}`);
  }
  // get-session answers 200 with `null` to a request it does not authenticate: check the user.
  const session = await fetch(`${base}${SESSION_ROUTE}`, { headers: { authorization: `Bearer ${token}` } });
  const sessionBody = await session.text();
  const sessionUser = session.status === 200 ? (JSON.parse(sessionBody) as { user?: { email?: string } } | null)?.user : undefined;
  if (sessionUser?.email !== BENCH_EMAIL) throw new Error(`GET ${SESSION_ROUTE} with the bearer token answered ${session.status}: ${sessionBody.slice(0, 200)}`);
  barePayload = sessionBody;

  // All synchronous, then exit: requests still in flight when the last run ended (autocannon
  // stops waiting for them, the server does not) get no turn to reach a closed database.
  const stop = () => {
    database.close();
    rmSync(directory, { recursive: true, force: true });
    process.exit(0);
  };
  // A parent that dies (Ctrl-C) takes the server with it.
  process.on('disconnect', stop);
  process.on('message', (message: PeerParentMessage) => {
    if (message.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', microseconds: user + system });
    } else {
      stop();
    }
  });
  send({
    type: 'ready',
    port: address.port,
    bareRoute: BARE_ROUTE,
    sessionRoute: SESSION_ROUTE,
    token,
    betterAuthVersion: await betterAuthVersion(),
  });
}

start().catch((error: unknown) => {
  send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
