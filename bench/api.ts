/**
 * What authentication costs an API request, on SQLite and on PostgreSQL:
 *
 * - GET /api/users/me/ with `Authorization: Token <key>`, the same with a session cookie, and a
 *   bare route on the same Fastify instance answering the same JSON with no authentication:
 *   requests/s, p50, p99 and each one's requests/s as a fraction of the bare route's. The goal is
 *   at least 0.6 on SQLite and 0.4 on PostgreSQL.
 * - POST /api/auth-token/ logins per second, against the raw hash rate of the same password
 *   service (same settings, same number of callers) measured in the same run.
 *
 * The server is the example site (bench/api-server.ts) in a child process, so that autocannon's
 * own CPU use, here in the parent, is not the server's; it runs with production's settings
 * (NODE_ENV=production: Django's argon2 parameters, template cache, logging off) and with
 * LATCHKEY_ACCOUNT_RATE_LIMITS=false, or the login benchmark would measure the rate limiter.
 * SQLite is a file in a new temporary directory; PostgreSQL a new database on TEST_DATABASE_URL's
 * server (default postgres://postgres@127.0.0.1:5432/postgres), dropped at the end, or skipped
 * with one line when that server cannot be reached. docs/performance.md explains the figures.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import type { ChildMessage, ParentMessage } from './api-server.js';

/** Concurrent connections for the GET routes: far more than one core can serve, so the server is saturated. */
const CONNECTIONS = 50;
const WARM_UP_SECONDS = 3;
const SECONDS_PER_ROUTE = 10;
/** Concurrent logins: more than PASSWORD_HASHING_CONCURRENCY, so the hashing slots never wait for work. */
const LOGIN_CONNECTIONS = 8;
const LOGIN_SECONDS = 10;
const HASHING_SECONDS = 10;
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const GOALS = { sqlite: 0.6, postgres: 0.4 } as const;
const SERVER_START_TIMEOUT_MS = 120_000;

type DatabaseKind = keyof typeof GOALS;

interface BenchDatabase {
  kind: DatabaseKind;
  /** What to print: no credentials. */
  label: string;
  url: string;
  drop(): Promise<void>;
}

type Ready = Extract<ChildMessage, { type: 'ready' }>;

// ---------------------------------------------------------------------------------------------
// Databases

async function sqliteDatabase(): Promise<BenchDatabase> {
  const directory = await mkdtemp(join(tmpdir(), 'latchkey-bench-'));
  const file = join(directory, 'db.sqlite3');
  return { kind: 'sqlite', label: `SQLite, file ${file}`, url: `sqlite:${file}`, drop: () => rm(directory, { recursive: true, force: true }) };
}

async function adminStatement(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(statement);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as Error & { code?: unknown }).code;
  return error.message || (typeof code === 'string' ? code : error.name);
}

/** A new, empty database on the server, or why there is none. */
async function postgresDatabase(): Promise<BenchDatabase | string> {
  const serverUrl = process.env.TEST_DATABASE_URL || DEFAULT_POSTGRES_URL;
  let server: URL;
  try {
    server = new URL(serverUrl);
  } catch {
    return 'TEST_DATABASE_URL is not a URL: use postgres://user:pass@host:port/db.';
  }
  const where = `${server.hostname}:${server.port || '5432'}`;
  // Random, lower-case and alphanumeric, so it is safe to splice into DDL.
  const name = `lk_bench_${randomBytes(6).toString('hex')}`;
  try {
    await adminStatement(serverUrl, `create database ${name}`);
  } catch (error) {
    return `PostgreSQL at ${where} cannot be used (${describe(error)}): set TEST_DATABASE_URL to a server where this user may create databases.`;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    label: `PostgreSQL at ${where}, new database ${name}`,
    url: url.toString(),
    drop: () => adminStatement(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

// ---------------------------------------------------------------------------------------------
// The server process

class BenchServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly ready: Ready,
  ) {}

  static async start(databaseUrl: string): Promise<BenchServer> {
    const child = fork(fileURLToPath(new URL('./api-server.ts', import.meta.url)), [], {
      execArgv: ['--import', import.meta.resolve('tsx')],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        NODE_ENV: 'production',
        LATCHKEY_SECRET_KEY: randomBytes(48).toString('base64url'),
        LATCHKEY_ALLOWED_HOSTS: '127.0.0.1',
        LATCHKEY_ADMIN_URL: 'staff/',
        DATABASE_URL: databaseUrl,
        EMAIL_URL: 'console:',
        LATCHKEY_ACCOUNT_RATE_LIMITS: 'false',
      },
    });
    try {
      const ready = await nextMessage(child, SERVER_START_TIMEOUT_MS);
      if (ready.type !== 'ready') throw new Error(`The benchmark server answered ${ready.type} instead of ready.`);
      return new BenchServer(child, ready);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  get base(): string {
    return `http://127.0.0.1:${this.ready.port}`;
  }

  async ask<T extends ChildMessage['type']>(message: ParentMessage, answer: T, timeoutMs: number): Promise<Extract<ChildMessage, { type: T }>> {
    const reply = nextMessage(this.child, timeoutMs);
    this.child.send(message);
    const received = await reply;
    if (received.type !== answer) throw new Error(`The benchmark server answered ${received.type} instead of ${answer}.`);
    return received as Extract<ChildMessage, { type: T }>;
  }

  /** Seconds of CPU the server process has used so far (all its threads). */
  async cpuSeconds(): Promise<number> {
    return (await this.ask({ type: 'cpu' }, 'cpu', 5000)).microseconds / 1e6;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const force = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    this.child.send({ type: 'stop' } satisfies ParentMessage);
    await exited;
    clearTimeout(force);
  }
}

function nextMessage(child: ChildProcess, timeoutMs: number): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: ChildMessage) => {
      cleanup();
      if (message.type === 'failed') reject(new Error(`The benchmark server failed: ${message.message}`));
      else resolve(message);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`The benchmark server exited (code ${code ?? 'none'}).`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`The benchmark server did not answer within ${timeoutMs / 1000} s.`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

// ---------------------------------------------------------------------------------------------
// Clients

/** `name=value` of each Set-Cookie, for sending them back. */
function cookiesSet(response: Response): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const header of response.headers.getSetCookie()) {
    const [pair = ''] = header.split(';');
    const equals = pair.indexOf('=');
    if (equals > 0) cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
  }
  return cookies;
}

function cookieHeader(cookies: Map<string, string>): string {
  return [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
}

/** Logs in through the login page, as a browser does, and returns the Cookie header of its session. */
async function logInThroughThePage(server: BenchServer): Promise<string> {
  const { login, password, sessionCookie } = server.ready;
  const page = await fetch(`${server.base}/accounts/login/`);
  const cookies = cookiesSet(page);
  const csrf = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(await page.text())?.[1];
  if (csrf === undefined) throw new Error('The login page has no CSRF token.');
  const response = await fetch(`${server.base}/accounts/login/`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(cookies) },
    body: new URLSearchParams({ csrfmiddlewaretoken: csrf, login, password }).toString(),
  });
  const session = cookiesSet(response).get(sessionCookie);
  if (response.status !== 302 || session === undefined) {
    throw new Error(`Logging in through /accounts/login/ answered ${response.status} without a ${sessionCookie} cookie.`);
  }
  return `${sessionCookie}=${session}`;
}

interface Route {
  name: string;
  url: string;
  headers: Record<string, string>;
}

/** Each route answers 200 with the same JSON, or the comparison would be meaningless. */
async function checkRoutesAgree(routes: Route[]): Promise<void> {
  const bodies = await Promise.all(
    routes.map(async (route) => {
      const response = await fetch(route.url, { headers: route.headers });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${route.name} answered ${response.status}: ${body.slice(0, 200)}`);
      return body;
    }),
  );
  const [first] = bodies;
  if (bodies.some((body) => JSON.stringify(JSON.parse(body)) !== JSON.stringify(JSON.parse(first!)))) {
    throw new Error(`The routes answer different JSON: ${bodies.join(' / ')}`);
  }
}

/** One autocannon run, with the server's CPU time over it. */
interface Sample {
  requests: number;
  seconds: number;
  cpuSeconds: number;
  p50: number;
  p99: number;
  failures: string[];
}

async function sample(server: BenchServer, options: autocannon.Options): Promise<Sample> {
  const cpuBefore = await server.cpuSeconds();
  const result = await autocannon(options);
  const cpuAfter = await server.cpuSeconds();
  return {
    requests: result.requests.total,
    seconds: result.duration,
    cpuSeconds: cpuAfter - cpuBefore,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: [
      result.non2xx > 0 ? `${result.non2xx} non-2xx` : '',
      result.errors > 0 ? `${result.errors} errors` : '',
      result.timeouts > 0 ? `${result.timeouts} timeouts` : '',
    ].filter((part) => part !== ''),
  };
}

/** What a route did over all its runs. */
interface Load {
  requestsPerSecond: number;
  /** The mean of the runs' percentiles (autocannon gives percentiles, not the latencies themselves). */
  p50: number;
  p99: number;
  /** Seconds of server CPU per second of the runs: 1.0 is one core busy all the time. */
  serverCores: number;
  /**
   * Microseconds of server CPU per request: what a request costs, whatever else the machine is
   * doing (req/s also depends on how much CPU the server got, and on the client keeping up).
   */
  cpuPerRequest: number;
  /** Responses other than 2xx, and connection errors: any of them makes the row suspect. */
  failures: string;
}

function combine(samples: Sample[]): Load {
  const sum = (pick: (sample: Sample) => number) => samples.reduce((total, one) => total + pick(one), 0);
  const requests = sum((one) => one.requests);
  const seconds = sum((one) => one.seconds);
  const cpuSeconds = sum((one) => one.cpuSeconds);
  return {
    requestsPerSecond: requests / seconds,
    p50: sum((one) => one.p50) / samples.length,
    p99: sum((one) => one.p99) / samples.length,
    serverCores: cpuSeconds / seconds,
    cpuPerRequest: (cpuSeconds * 1e6) / Math.max(requests, 1),
    failures: samples.flatMap((one) => one.failures).join(', '),
  };
}

/**
 * Measures each route in two halves, in the order A B C then C B A: load from elsewhere on the
 * machine that grows or fades during the run then weighs on every route alike, instead of
 * favouring whichever was measured first.
 */
async function measureRoutes(server: BenchServer, routes: Route[]): Promise<Load[]> {
  const samples = routes.map((): Sample[] => []);
  const order = [...routes.keys(), ...[...routes.keys()].reverse()];
  for (const index of order) {
    const route = routes[index]!;
    samples[index]!.push(await sample(server, { url: route.url, headers: route.headers, connections: CONNECTIONS, duration: SECONDS_PER_ROUTE / 2 }));
  }
  return samples.map(combine);
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}

// ---------------------------------------------------------------------------------------------
// One database

async function benchmarkOn(database: BenchDatabase): Promise<void> {
  console.log(`### ${database.label}\n`);
  const server = await BenchServer.start(database.url);
  try {
    const { ready } = server;
    console.log(
      `server: the example site, NODE_ENV=production, rate limits off; ${ready.argon2}; ` +
        `PASSWORD_HASHING_CONCURRENCY ${ready.hashingConcurrency}; ${availableParallelism()} CPUs; Node ${process.version}`,
    );
    const cookie = await logInThroughThePage(server);
    const routes: Route[] = [
      { name: 'bare route, no authentication', url: `${server.base}${ready.bareRoute}`, headers: {} },
      { name: 'GET /api/users/me/, token', url: `${server.base}/api/users/me/`, headers: { authorization: `Token ${ready.token}` } },
      { name: 'GET /api/users/me/, session cookie', url: `${server.base}/api/users/me/`, headers: { cookie } },
    ];
    await checkRoutesAgree(routes);

    // Warm every route first (JIT, connection pool, SQLite's page cache), then measure each.
    for (const route of routes) await autocannon({ url: route.url, headers: route.headers, connections: CONNECTIONS, duration: WARM_UP_SECONDS });
    const loads = await measureRoutes(server, routes);
    const bare = loads[0]!.requestsPerSecond;
    console.log(`\n${CONNECTIONS} connections, ${SECONDS_PER_ROUTE} s per route (two halves: A B C, C B A) after ${WARM_UP_SECONDS} s of warm-up each\n`);
    printTable([
      ['route', 'req/s', 'p50 ms', 'p99 ms', 'vs bare', 'server CPU', 'CPU µs/req', 'vs bare by CPU', 'failures'],
      ...routes.map((route, index) => {
        const row = loads[index]!;
        return [
          route.name,
          row.requestsPerSecond.toFixed(0),
          row.p50.toFixed(0),
          row.p99.toFixed(0),
          (row.requestsPerSecond / bare).toFixed(2),
          `${(row.serverCores * 100).toFixed(0)}%`,
          row.cpuPerRequest.toFixed(0),
          (loads[0]!.cpuPerRequest / row.cpuPerRequest).toFixed(2),
          row.failures || 'none',
        ];
      }),
    ]);
    const goal = GOALS[database.kind];
    const verdicts = routes.slice(1).map((route, index) => {
      const ratio = loads[index + 1]!.requestsPerSecond / bare;
      return `${route.name.replace('GET /api/users/me/, ', '')} ${ratio.toFixed(2)} (${ratio >= goal ? 'met' : 'MISSED'})`;
    });
    console.log(`goal: at least ${goal} of the bare route: ${verdicts.join('; ')}`);

    // Logins: each one is a password verification; compare with the raw rate of those.
    const loginUrl = `${server.base}/api/auth-token/`;
    const loginBody = new URLSearchParams({ username: ready.login, password: ready.password }).toString();
    const loginHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
    const check = await fetch(loginUrl, { method: 'POST', headers: loginHeaders, body: loginBody });
    const checkBody = await check.text();
    if (check.status !== 200 || (JSON.parse(checkBody) as { token?: string }).token !== ready.token) {
      throw new Error(`POST /api/auth-token/ answered ${check.status}: ${checkBody.slice(0, 200)}`);
    }
    // Logins and raw hashing alternate (A B B A), for the same reason as the routes above.
    const loginRun = () => sample(server, { url: loginUrl, method: 'POST', headers: loginHeaders, body: loginBody, connections: LOGIN_CONNECTIONS, duration: LOGIN_SECONDS / 2 });
    const hashingRun = () => server.ask({ type: 'measure-hashing', callers: LOGIN_CONNECTIONS, durationMs: (HASHING_SECONDS / 2) * 1000 }, 'hashing', (HASHING_SECONDS + 30) * 1000);
    const loginSamples = [await loginRun()];
    const hashingRuns = [await hashingRun(), await hashingRun()];
    loginSamples.push(await loginRun());
    const logins = combine(loginSamples);
    const hashing = {
      verifications: hashingRuns.reduce((total, run) => total + run.verifications, 0),
      all: hashingRuns.reduce((total, run) => total + run.all, 0),
      seconds: hashingRuns.reduce((total, run) => total + run.seconds, 0),
      cpuSeconds: hashingRuns.reduce((total, run) => total + run.cpuSeconds, 0),
    };
    const hashesPerSecond = hashing.verifications / hashing.seconds;
    const cpuPerHash = (hashing.cpuSeconds * 1e6) / Math.max(hashing.all, 1);
    console.log(`\nlogins: ${LOGIN_CONNECTIONS} connections, ${LOGIN_SECONDS} s; raw hashing: ${LOGIN_CONNECTIONS} callers of the same service for ${HASHING_SECONDS} s; in halves: logins, hashing, hashing, logins\n`);
    printTable([
      ['', 'per second', 'p50 ms', 'p99 ms', 'vs hashing', 'CPU ms each', 'vs hashing by CPU', 'failures'],
      [
        'POST /api/auth-token/ logins',
        logins.requestsPerSecond.toFixed(2),
        logins.p50.toFixed(0),
        logins.p99.toFixed(0),
        (logins.requestsPerSecond / hashesPerSecond).toFixed(2),
        (logins.cpuPerRequest / 1000).toFixed(0),
        (cpuPerHash / logins.cpuPerRequest).toFixed(2),
        logins.failures || 'none',
      ],
      ['password verifications (raw)', hashesPerSecond.toFixed(2), '', '', '1.00', (cpuPerHash / 1000).toFixed(0), '1.00', ''],
    ]);
  } finally {
    await server.stop();
  }
}

export async function benchmarkApi(): Promise<void> {
  const sqlite = await sqliteDatabase();
  try {
    await benchmarkOn(sqlite);
  } finally {
    await sqlite.drop();
  }
  console.log('');
  const postgres = await postgresDatabase();
  if (typeof postgres === 'string') {
    console.log(`### PostgreSQL: skipped. ${postgres}`);
    return;
  }
  try {
    await benchmarkOn(postgres);
  } finally {
    await postgres.drop();
  }
}
