/**
 * A burst of 500 password logins at once (issue 20): POST /api/auth-token/ with the username and
 * password as form fields, all 500 sent together, against the example site at production's
 * settings (bench/api-server.ts: NODE_ENV=production, so Django's argon2 parameters, 100 MiB per
 * hash; rate limits off). What it measures:
 *
 * - the burst: how long until the last of the 500 answered, logins per second, the server's CPU
 *   per login, and each login's latency (p50, p99, max). Every login must answer 200 with the token.
 * - the server's memory: its peak RSS (VmHWM in /proc/<pid>/status, the high-water mark over the
 *   process's life, start-up included), and VmRSS sampled every RSS_SAMPLE_MS during the burst.
 *   Goal: under 1.5 GB.
 * - the bare route (no authentication, the same Fastify instance) meanwhile: a light stream of
 *   BARE_RATE requests a second over BARE_CONNECTIONS connections, during the burst and, for
 *   comparison, for BEFORE_SECONDS before it. Goal: its p99 during the burst under 50 ms, i.e. a
 *   server busy hashing still answers everything else at once (argon2 runs on libuv's thread
 *   pool, not on the event loop). The slowest few are printed with when they were sent, which
 *   tells a stall while the 500 requests arrive from slowness spread over the hashing.
 *
 * Why 500 logins of the one benchmark user stand for 500 people logging in: each login is one
 * full argon2 verification of a stored production hash, whoever the user is, and that hash is
 * nearly all of the login's CPU (docs/performance.md: about 85 ms a login, 80 ms a bare
 * verification) and its memory (100 MiB while it runs). PASSWORD_HASHING_CONCURRENCY bounds how
 * many run at once and the rest wait in a FIFO queue (PASSWORD_HASHING_QUEUE_LIMIT, 1,000 by
 * default, more than 500), so the peak is set by that bound, not by how many logins arrive or
 * whose they are. What 500 different users would add is 500 different rows read instead of one
 * cached page, and a token written for each user who had none instead of the one token read
 * back: small beside a hash. (With rate limits on, one user's 500 logins would be throttled; they
 * are off here, as in bench/api.ts.)
 *
 * The logins are sent by a client process of its own (BURST_CLIENT), so that opening 500
 * connections at once does not stall this process, which times the bare route: its latencies are
 * autocannon's response times for each request, to the tenth of a millisecond. On SQLite, then on
 * PostgreSQL when TEST_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres)
 * can be used.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { recordGoal } from './goals.js';
import { BenchServer, serverDescription, onEachDatabase, printTable, type BenchDatabase } from './harness.js';

const BURST_LOGINS = 500;
const BARE_CONNECTIONS = 4;
/** Requests per second to the bare route, over all its connections: light beside what the server can answer. */
const BARE_RATE = 200;
const BEFORE_SECONDS = 5;
const RSS_SAMPLE_MS = 50;
/** 1.5 GB. */
const GOAL_PEAK_RSS_BYTES = 1.5e9;
const GOAL_BARE_P99_MS = 50;
const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// The server's memory

/** VmRSS and VmHWM of a process, in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kilobytes = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (match === null) throw new Error(`/proc/${pid}/status has no ${field}.`);
    return Number(match[1]) * 1024;
  };
  return { rss: kilobytes('VmRSS'), peak: kilobytes('VmHWM') };
}

/** Samples VmRSS every RSS_SAMPLE_MS until stopped; returns the largest sample. */
function sampleRss(pid: number): { stop(): number } {
  let largest = memoryOf(pid).rss;
  const timer = setInterval(() => {
    largest = Math.max(largest, memoryOf(pid).rss);
  }, RSS_SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(largest, memoryOf(pid).rss);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The bare route's stream

interface Latencies {
  /** Milliseconds, ascending. */
  sorted: number[];
  /** The slowest requests: when each was sent (performance.now()) and how long it took. */
  slowest: Array<{ sentAt: number; milliseconds: number }>;
  failures: string;
}

const SLOWEST_KEPT = 5;

/** A light stream of requests to the bare route, running until stop(): each answered request's latency. */
function streamToBareRoute(server: BenchServer): { stop(): Promise<Latencies> } {
  const answered: Array<{ sentAt: number; milliseconds: number }> = [];
  let finished!: (result: autocannon.Result) => void;
  let failed!: (error: unknown) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finished = resolve;
    failed = reject;
  });
  const instance = autocannon(
    // A duration far past any burst: stop() ends it.
    { url: `${server.base}${server.ready.bareRoute}`, connections: BARE_CONNECTIONS, overallRate: BARE_RATE, duration: 3600 },
    (error: unknown, result) => (error ? failed(error) : finished(result)),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode === 200) answered.push({ sentAt: performance.now() - responseTime, milliseconds: responseTime });
  });
  return {
    async stop() {
      instance.stop();
      const result = await done;
      return {
        sorted: answered.map((one) => one.milliseconds).sort((a, b) => a - b),
        slowest: answered.sort((a, b) => b.milliseconds - a.milliseconds).slice(0, SLOWEST_KEPT),
        failures: [result.non2xx > 0 ? `${result.non2xx} non-2xx` : '', result.errors > 0 ? `${result.errors} errors` : '', result.timeouts > 0 ? `${result.timeouts} timeouts` : '']
          .filter((part) => part !== '')
          .join(', '),
      };
    },
  };
}

function percentile(sorted: number[], fraction: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

const ms = (value: number): string => (Number.isNaN(value) ? 'n/a' : value.toFixed(1));
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(0)} MiB`;

// ---------------------------------------------------------------------------------------------
// The burst

interface Burst {
  /** When the first login was sent, as this process's performance.now(). */
  startedAt: number;
  seconds: number;
  /** Each login's milliseconds, ascending. */
  sorted: number[];
  failures: string[];
}

/**
 * The burst's client: plain JavaScript run with `node -e` in a process of its own, so that the
 * work of opening 500 connections and sending 500 requests at once is not done by this process's
 * event loop, where it would delay the bare route's responses as this process sees them. It sends
 * BURST_COUNT logins together, each on its own connection (fetch opens one per request in
 * flight), and writes each one's milliseconds, status and body as JSON once all have answered.
 */
const BURST_CLIENT = `
(async () => {
  const { BURST_URL: url, BURST_BODY: body, BURST_COUNT: count } = process.env;
  const started = performance.now();
  const outcomes = await Promise.all(Array.from({ length: Number(count) }, async () => {
    const sent = performance.now();
    try {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      const text = await response.text();
      return { milliseconds: performance.now() - sent, status: response.status, text: text.slice(0, 200) };
    } catch (error) {
      return { milliseconds: performance.now() - sent, status: 0, text: error instanceof Error ? error.message : String(error) };
    }
  }));
  process.stdout.write(JSON.stringify({ startedAtEpoch: performance.timeOrigin + started, seconds: (performance.now() - started) / 1000, outcomes }));
})();
`;

interface BurstClientReport {
  /** Milliseconds since the epoch, to the fraction. */
  startedAtEpoch: number;
  seconds: number;
  outcomes: Array<{ milliseconds: number; status: number; text: string }>;
}

/** BURST_LOGINS logins sent together by the burst's client; waits for every answer. */
async function loginBurst(server: BenchServer): Promise<Burst> {
  const { login, password, token } = server.ready;
  const child = spawn(process.execPath, ['-e', BURST_CLIENT], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      BURST_URL: `${server.base}/api/auth-token/`,
      BURST_BODY: new URLSearchParams({ username: login, password }).toString(),
      BURST_COUNT: String(BURST_LOGINS),
    },
  });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (exitCode !== 0) throw new Error(`The burst's client exited with code ${exitCode ?? 'none'}.`);
  const report = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BurstClientReport;
  const failures = report.outcomes.flatMap(({ status, text }) => {
    if (status !== 200) return [status === 0 ? text : `${status}: ${text.slice(0, 100)}`];
    return (JSON.parse(text) as { token?: unknown }).token === token ? [] : [`200 without the user's token: ${text.slice(0, 100)}`];
  });
  return {
    startedAt: report.startedAtEpoch - performance.timeOrigin,
    seconds: report.seconds,
    sorted: report.outcomes.map((outcome) => outcome.milliseconds).sort((a, b) => a - b),
    failures,
  };
}

/** "3 × 503: ..., 1 × fetch failed": each distinct failure once, with how often. */
function summarize(failures: string[]): string {
  const counts = new Map<string, number>();
  for (const failure of failures) counts.set(failure, (counts.get(failure) ?? 0) + 1);
  return [...counts].map(([failure, times]) => `${times} × ${failure}`).join('; ');
}

// ---------------------------------------------------------------------------------------------
// One database

async function benchmarkOn(database: BenchDatabase): Promise<void> {
  console.log(`### ${database.label}\n`);
  const server = await BenchServer.start(database.url);
  try {
    const { ready } = server;
    console.log(serverDescription(ready));
    // One login first: it must work, and its code paths are then warm (as on a server that has been up a while).
    const check = await checkOneLogin(server);
    if (check !== undefined) throw new Error(`POST /api/auth-token/ ${check}`);

    const beforeStream = streamToBareRoute(server);
    await new Promise((resolve) => setTimeout(resolve, BEFORE_SECONDS * 1000));
    const before = await beforeStream.stop();
    const memoryBefore = memoryOf(server.pid);

    const rss = sampleRss(server.pid);
    const cpuBefore = await server.cpuSeconds();
    const duringStream = streamToBareRoute(server);
    const burst = await loginBurst(server);
    const during = await duringStream.stop();
    const largestRss = rss.stop();
    const cpuSeconds = (await server.cpuSeconds()) - cpuBefore;
    const memoryAfter = memoryOf(server.pid);
    const peak = Math.max(memoryAfter.peak, largestRss);

    console.log(
      `\n${BURST_LOGINS} logins sent at once: the last answered after ${burst.seconds.toFixed(1)} s, ` +
        `${(BURST_LOGINS / burst.seconds).toFixed(1)} logins/s, ${((cpuSeconds * 1000) / BURST_LOGINS).toFixed(0)} ms of server CPU each; ` +
        `${BURST_LOGINS - burst.failures.length} of ${BURST_LOGINS} answered 200 with the token; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    console.log(
      `server memory: RSS ${mib(memoryBefore.rss)} before the burst (VmHWM ${mib(memoryBefore.peak)} since start); ` +
        `during it, largest VmRSS sampled every ${RSS_SAMPLE_MS} ms ${mib(largestRss)}, VmHWM after ${mib(memoryAfter.peak)}\n`,
    );
    printTable([
      ['', 'requests', 'p50 ms', 'p99 ms', 'max ms', 'failures'],
      [`bare route, ${BEFORE_SECONDS} s before the burst`, String(before.sorted.length), ms(percentile(before.sorted, 0.5)), ms(percentile(before.sorted, 0.99)), ms(before.sorted.at(-1) ?? Number.NaN), before.failures || 'none'],
      ['bare route, during the burst', String(during.sorted.length), ms(percentile(during.sorted, 0.5)), ms(percentile(during.sorted, 0.99)), ms(during.sorted.at(-1) ?? Number.NaN), during.failures || 'none'],
      ['POST /api/auth-token/ logins', String(BURST_LOGINS), ms(percentile(burst.sorted, 0.5)), ms(percentile(burst.sorted, 0.99)), ms(burst.sorted.at(-1) ?? Number.NaN), burst.failures.length === 0 ? 'none' : String(burst.failures.length)],
    ]);
    if (burst.failures.length > 0) console.log(`login failures: ${summarize(burst.failures)}`);
    // When in the burst the worst waits were: all at its start (the connections arriving) or spread over it (the hashing).
    const slowest = during.slowest.map((one) => `${ms(one.milliseconds)} ms at ${((one.sentAt - burst.startedAt) / 1000).toFixed(1)} s`);
    console.log(`the bare route's slowest requests during the burst (sent that long after the first login): ${slowest.join(', ')}`);

    const duringP99 = percentile(during.sorted, 0.99);
    const goals = [
      { measure: `logins of a ${BURST_LOGINS}-login burst answered 200 with the token`, today: `${BURST_LOGINS - burst.failures.length}`, goal: `${BURST_LOGINS}`, met: burst.failures.length === 0 },
      { measure: `server peak RSS in a ${BURST_LOGINS}-login burst`, today: `${(peak / 1e9).toFixed(2)} GB`, goal: `< ${GOAL_PEAK_RSS_BYTES / 1e9} GB`, met: peak < GOAL_PEAK_RSS_BYTES },
      { measure: `bare route p99 during a ${BURST_LOGINS}-login burst`, today: `${ms(duringP99)} ms`, goal: `< ${GOAL_BARE_P99_MS} ms`, met: duringP99 < GOAL_BARE_P99_MS && during.failures === '' },
    ];
    const where = database.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    console.log('');
    for (const goal of goals) {
      recordGoal({ ...goal, measure: `${goal.measure}, ${where}` });
      console.log(`goal: ${goal.measure}: ${goal.today} (${goal.goal}: ${goal.met ? 'met' : 'MISSED'})`);
    }
  } finally {
    await server.stop();
  }
}

/** One login, answered 200 with the user's token; undefined when it was, else what it answered. */
async function checkOneLogin(server: BenchServer): Promise<string | undefined> {
  const response = await fetch(`${server.base}/api/auth-token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: server.ready.login, password: server.ready.password }).toString(),
  });
  const text = await response.text();
  return response.status === 200 && (JSON.parse(text) as { token?: unknown }).token === server.ready.token ? undefined : `answered ${response.status}: ${text.slice(0, 200)}`;
}

export async function benchmarkLoginBurst(): Promise<void> {
  await onEachDatabase(benchmarkOn);
}
