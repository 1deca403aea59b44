/**
 * Several instances of the example site as an operator deploys them (docs/production.md): real
 * processes in production mode on one PostgreSQL database and one Redis, with the same secret key,
 * behind a round-robin proxy on loopback (round-robin-proxy.ts), mailing through one real SMTP
 * server. Used by the two-instance test (e2e/two-instances.test.ts), the revocation test
 * (e2e/revocation-across-processes.test.ts) and the soak benchmark (bench/soak.ts), so it imports
 * nothing from vitest. The revocation test also runs them on one SQLite file (createClusterSqliteFile),
 * without Redis, as several processes of one machine share it, and runs the site's management
 * commands against their database (RunningCluster.manage) as a third process.
 *
 * Each instance is started the way `npm start` starts it (`node --import tsx src/server.ts` with
 * NODE_ENV=production), but as `node` itself rather than through npm, so that the process the
 * harness holds is the server and its memory can be read (rssBytes). Production refuses to start
 * on a database with pending migrations, so the database is migrated first, once, as an
 * operator's release step (`manage migrate`) would; here by the same library call in this
 * process, which has the library loaded already, rather than in a third process that would spend
 * seconds of CPU loading it. Then the instances start in parallel.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestSmtpServer } from '@latchkey/core/testing/smtp';
import { projectSettings } from '../../examples/site/src/config/settings.js';
import { openDatabase } from '../../packages/latchkey/src/storage/database.js';
import type { SitePostgresDatabase } from './postgres.js';
import { startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.js';

export type TestSmtpServer = Awaited<ReturnType<typeof startTestSmtpServer>>;

const exampleSite = fileURLToPath(new URL('../../examples/site', import.meta.url));
const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;
/** The site's own grace period is 10 s (server.ts); past this, the harness stops waiting. */
const STOP_TIMEOUT_MS = 15_000;
/** Production logs every request; only the end of it is kept, for a failure to show. */
const OUTPUT_TAIL_CHARS = 64 * 1024;

/** One SQLite file in a directory of its own, for every instance of a cluster. */
export interface ClusterSqliteFile {
  /** The instances' DATABASE_URL: `sqlite:<absolute path>`. */
  url: string;
  /** Removes the directory, with the file and its -wal and -shm files. Safe to call twice. */
  drop(): Promise<void>;
}

/** A fresh SQLite file (created by the migration at the cluster's start) in a new temporary directory. */
export async function createClusterSqliteFile(): Promise<ClusterSqliteFile> {
  const directory = await mkdtemp(join(tmpdir(), 'lk-cluster-'));
  let dropping: Promise<void> | undefined;
  return { url: `sqlite:${join(directory, 'db.sqlite3')}`, drop: () => (dropping ??= rm(directory, { recursive: true, force: true })) };
}

export interface StartClusterOptions {
  /** A database of the cluster's own (harness/postgres.ts, or createClusterSqliteFile); the cluster drops it when it stops. */
  database: SitePostgresDatabase | ClusterSqliteFile;
  /** Redis for every instance; without it the rate-limit counters and one-time claims are kept in the database. */
  redisUrl?: string;
  /** 2 by default. */
  instances?: number;
  /** Extra environment variables for every instance; they win over the harness's. */
  env?: Record<string, string>;
  /** How long starting the instances may take; 50 s by default. */
  startTimeoutMs?: number;
}

export interface SiteInstance {
  /** The instance's own address; clients go through the proxy (RunningCluster.url) instead. */
  url: string;
  pid: number;
  /** The server process's resident memory now, from /proc; undefined once it has exited. */
  rssBytes(): number | undefined;
  /** The end of what the process has written, for a failing test or benchmark to show. */
  output(): string;
}

export interface RunningCluster {
  /** The proxy's address: the site's SITE_URL, so links in its mail lead here. */
  url: string;
  proxy: RoundRobinProxy;
  smtp: TestSmtpServer;
  instances: SiteInstance[];
  /**
   * Runs a management command (`npm run manage -- ...args` of the example site: `tsx src/manage.ts`)
   * as its own process, with the instances' environment plus `env`, on their database; rejects
   * with its output when it exits non-zero. E.g. `manage(['delete-token', 'ada'])`.
   */
  manage(args: string[], env?: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
  /** Stops every instance (SIGTERM, then SIGKILL after 15 s), the proxy and the SMTP server, and drops the database. Safe to call twice. */
  stop(): Promise<void>;
}

interface Started {
  instance: SiteInstance;
  stop(): Promise<void>;
}

export async function startCluster(options: StartClusterOptions): Promise<RunningCluster> {
  const count = options.instances ?? 2;
  const timeoutMs = options.startTimeoutMs ?? 50_000;
  const smtp = await startTestSmtpServer();
  const proxy = await startRoundRobinProxy();
  const started: Started[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.allSettled(started.map((one) => one.stop()));
    await Promise.allSettled([proxy.close(), smtp.close()]);
    await options.database.drop();
  };
  // The instances' environment, and the management commands' (RunningCluster.manage).
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    // Each instance takes a free port and says which: only the proxy's address is ever published.
    PORT: '0',
    DATABASE_URL: options.database.url,
    ...(options.redisUrl === undefined ? {} : { REDIS_URL: options.redisUrl }),
    EMAIL_URL: smtp.url,
    // One key for all: a session, a CSRF token or a signed key made by one instance holds on every other.
    LATCHKEY_SECRET_KEY: randomBytes(48).toString('base64url'),
    LATCHKEY_SITE_URL: proxy.url,
    LATCHKEY_ALLOWED_HOSTS: '127.0.0.1',
    LATCHKEY_ADMIN_URL: 'staff/',
    // The proxy is one hop: the client's address is the last in X-Forwarded-For.
    LATCHKEY_TRUST_PROXY_HOPS: '1',
    ...options.env,
  };
  try {
    await migrate(options.database.url);
    const results = await Promise.allSettled(Array.from({ length: count }, () => startInstance(env, timeoutMs)));
    for (const result of results) if (result.status === 'fulfilled') started.push(result.value);
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await stopAll();
    throw error;
  }
  proxy.setUpstreams(started.map((one) => one.instance.url));
  let stopping: Promise<void> | undefined;
  return {
    url: proxy.url,
    proxy,
    smtp,
    instances: started.map((one) => one.instance),
    manage: (args, extraEnv = {}) => runManage({ ...env, ...extraEnv }, args),
    stop: () => (stopping ??= stopAll()),
  };
}

/** `tsx src/manage.ts ...args` in the example site, as its `manage` script runs it, but as `node --import tsx` itself: npm would add only its own start-up. */
function runManage(env: Record<string, string>, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/manage.ts', ...args], { cwd: exampleSite, env }, (error, stdout, stderr) => {
      if (error) reject(new Error(`manage ${args.join(' ')} failed (${error.message}):\n${stderr}${stdout}`));
      else resolve({ stdout, stderr });
    });
  });
}

async function migrate(databaseUrl: string): Promise<void> {
  const database = await openDatabase({ url: databaseUrl, usernameType: projectSettings.USERNAME_TYPE });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
}

function startInstance(env: Record<string, string>, timeoutMs: number): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: exampleSite, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Chunks are joined and cut only now and then: under load the instance logs hundreds of lines a second.
  let chunks: string[] = [];
  let length = 0;
  const keep = (chunk: Buffer): void => {
    chunks.push(chunk.toString());
    length += chunks.at(-1)!.length;
    if (length > 2 * OUTPUT_TAIL_CHARS) {
      chunks = [chunks.join('').slice(-OUTPUT_TAIL_CHARS)];
      length = chunks[0]!.length;
    }
  };
  const output = (): string => chunks.join('').slice(-OUTPUT_TAIL_CHARS);
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  return new Promise<Started>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(`did not say "Server listening at" within ${timeoutMs / 1000} s`), timeoutMs);
    const onData = (): void => {
      const match = LISTENING.exec(output());
      if (!match) return;
      settled = true;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      resolve({ instance: instanceOf(child, match[1]!, output), stop: () => stopProcess(child, exited) });
    };
    function fail(why: string): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`An instance of the example site ${why}:\n${output()}`));
    }
    child.stdout.on('data', onData);
    void exited.then(() => fail(`exited (code ${child.exitCode ?? 'none'}, signal ${child.signalCode ?? 'none'})`));
  });
}

function instanceOf(child: ChildProcess, url: string, output: () => string): SiteInstance {
  const pid = child.pid!;
  return {
    url,
    pid,
    rssBytes: () => (child.exitCode === null && child.signalCode === null ? residentBytes(pid) : undefined),
    output,
  };
}

/** VmRSS from /proc (Linux): what `ps` calls RSS, the process's memory in RAM. */
function residentBytes(pid: number): number | undefined {
  try {
    const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(join('/proc', String(pid), 'status'), 'utf8'))?.[1];
    return kilobytes === undefined ? undefined : Number(kilobytes) * 1024;
  } catch {
    return undefined;
  }
}

async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS)))]);
  clearTimeout(timer);
  if (late) child.kill('SIGKILL');
  await exited;
}

/**
 * The newest link mailed to `to` whose path starts with `pathPrefix` (e.g. '/accounts/confirm-email/'),
 * waiting for one up to `timeoutMs`: some flows mail in the background.
 */
export async function mailedLink(smtp: TestSmtpServer, to: string, pathPrefix: string, timeoutMs = 15_000): Promise<URL> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const links = smtp.messages
      .filter((message) => message.envelope.to.includes(to))
      .flatMap((message) => message.text.match(/https?:\/\/[^\s<>"')\]]+/g) ?? [])
      // A sentence may end right after a link; its full stop is not part of the key.
      .map((link) => new URL(link.replace(/[.,;:!?]+$/, '')))
      .filter((link) => link.pathname.startsWith(pathPrefix));
    if (links.length > 0) return links.at(-1)!;
    if (performance.now() > deadline) throw new Error(`No mail to ${to} with a link to ${pathPrefix} within ${timeoutMs / 1000} s.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The key in a mailed link such as `/accounts/confirm-email/<key>/`: the path's last segment. */
export function keyOf(link: URL): string {
  return decodeURIComponent(link.pathname.split('/').filter((segment) => segment !== '').at(-1) ?? '');
}
