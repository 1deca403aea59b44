/**
 * What the benchmarks that drive the example site share: a server process (bench/api-server.ts)
 * whose CPU time can be read, a new database to run it on, and autocannon samples with the
 * server's CPU per request. The server runs in a child process so that the load generator's own
 * CPU use, in the parent, is not counted against it.
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

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const SERVER_START_TIMEOUT_MS = 120_000;

export interface BenchDatabase {
  kind: 'sqlite' | 'postgres';
  /** What to print: no credentials. */
  label: string;
  url: string;
  drop(): Promise<void>;
}

export type Ready = Extract<ChildMessage, { type: 'ready' }>;

// ---------------------------------------------------------------------------------------------
// Databases

export async function sqliteDatabase(): Promise<BenchDatabase> {
  const directory = await mkdtemp(join(tmpdir(), 'latchkey-bench-'));
  const file = join(directory, 'db.sqlite3');
  return { kind: 'sqlite', label: `SQLite, file ${file}`, url: `sqlite:${file}`, drop: () => rm(directory, { recursive: true, force: true }) };
}

/** Runs one statement on its own connection (creating or dropping a database). */
export async function adminStatement(url: string, statement: string): Promise<void> {
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
export async function postgresDatabase(): Promise<BenchDatabase | string> {
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

/**
 * Runs `benchmark` on a new SQLite file, then on a new PostgreSQL database (or says in one line why
 * PostgreSQL is skipped), dropping each afterwards.
 */
export async function onEachDatabase(benchmark: (database: BenchDatabase) => Promise<void>): Promise<void> {
  const sqlite = await sqliteDatabase();
  try {
    await benchmark(sqlite);
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
    await benchmark(postgres);
  } finally {
    await postgres.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// The server process

/**
 * BENCH_CPU_PROFILE_DIR=<dir> makes each server write a V8 CPU profile there when it stops
 * (Chrome's DevTools open it), to see where a route's time goes.
 */
export function profilingArguments(): string[] {
  const directory = process.env.BENCH_CPU_PROFILE_DIR;
  return directory ? ['--cpu-prof', `--cpu-prof-dir=${directory}`] : [];
}

/** The line that says how the example site's server runs, printed above each database's figures. */
export function serverDescription(ready: Ready): string {
  return (
    `server: the example site, NODE_ENV=production, rate limits off; ${ready.argon2}; ` +
    `PASSWORD_HASHING_CONCURRENCY ${ready.hashingConcurrency}; ${availableParallelism()} CPUs; Node ${process.version}`
  );
}

export class BenchServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly ready: Ready,
  ) {}

  /** `env` adds to or replaces the environment below (a scale benchmark brings its own secret key). */
  static async start(databaseUrl: string, env: Record<string, string> = {}): Promise<BenchServer> {
    const child = fork(fileURLToPath(new URL('./api-server.ts', import.meta.url)), [], {
      execArgv: ['--import', import.meta.resolve('tsx'), ...profilingArguments()],
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
        ...env,
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

  /** The server process's id, to read its memory from /proc/<pid>/status. */
  get pid(): number {
    return this.child.pid!;
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

/** One autocannon run, with the server's CPU time over it. */
export interface Sample {
  requests: number;
  seconds: number;
  cpuSeconds: number;
  p50: number;
  p99: number;
  failures: string[];
}

/** `server` is any process whose CPU time can be read: the example site, or a peer (bench/peers.ts). */
export async function sample(server: Pick<BenchServer, 'cpuSeconds'>, options: autocannon.Options): Promise<Sample> {
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
export interface Load {
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

export function combine(samples: Sample[]): Load {
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

export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}

