/**
 * `npm run bench -- soak [--minutes N]` (10 by default): mixed traffic for N minutes against two
 * instances of the example site in production mode on PostgreSQL and Redis, behind the
 * round-robin proxy of the two-instance test (e2e/harness/cluster.ts), with the rate limits on
 * and Django's argon2 parameters. The people and their pace are in soak-traffic.ts.
 *
 * It prints a row per minute as the minute ends: the machine's load average, requests, errors,
 * p50 and p99 latency (as the clients see them, through the proxy) and each instance's RSS (the
 * mean of samples every 5 s); then the figures by kind of request, and whether the run passed:
 * no error at all, and each instance's RSS in the last minute at most 10% above minute 2 (minute 1
 * warms up: JIT, pools, template cache). A leak shows as a climb; memory given back after the
 * warm-up (minute 2 is its high point) is no fault. docs/performance.md ("Soak: two instances") has a run's
 * figures.
 *
 * PostgreSQL is TEST_DATABASE_URL's server (postgres://postgres@127.0.0.1:5432/postgres when not
 * set), where it creates a database of its own and drops it at the end; Redis is REDIS_URL
 * (redis://127.0.0.1:6379/0 when not set), where keys are named after the run's secret key.
 */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { startCluster, type RunningCluster } from '../e2e/harness/cluster.js';
import { DEFAULT_POSTGRES_URL } from './harness.js';
import { createSitePostgresDatabase, type SitePostgresDatabase } from '../e2e/harness/postgres.js';
import { loginUser, newAccount, pagesUser, sessionUser, signUpAndConfirm, signupUser, tokenUser, type Traffic } from './soak-traffic.js';

const DEFAULT_MINUTES = 10;
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379/0';
/** How many people of each kind (soak-traffic.ts); one signup user at most. */
const PEOPLE = { token: 6, session: 6, pages: 4, login: 2, signup: 1 };
const MINUTE_MS = 60_000;
const RSS_SAMPLE_MS = 5_000;
const RSS_TOLERANCE = 0.1;
/** Accounts signed up at once while setting up: each costs two argon2 hashes. */
const SETUP_CONCURRENCY = 4;

/** What one minute saw. */
interface Minute {
  requests: number;
  errors: number;
  latencies: number[];
  /** RSS samples in bytes, per instance. */
  rss: number[][];
}

interface KindTotals {
  requests: number;
  errors: number;
  latencies: number[];
}

function minutesOption(): number {
  const index = process.argv.indexOf('--minutes');
  const given = index >= 0 ? process.argv[index + 1] : process.argv.find((argument) => argument.startsWith('--minutes='))?.slice('--minutes='.length);
  if (given === undefined) return DEFAULT_MINUTES;
  const minutes = Number(given);
  if (!Number.isInteger(minutes) || minutes < 1) throw new Error(`--minutes must be a whole number of minutes, 1 or more; got ${given}.`);
  return minutes;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

const mean = (values: number[]): number => values.reduce((total, value) => total + value, 0) / values.length;
const megabytes = (bytes: number): string => (Number.isNaN(bytes) ? 'n/a' : (bytes / 2 ** 20).toFixed(0));
const milliseconds = (value: number): string => (Number.isNaN(value) ? 'n/a' : value.toFixed(1));

/** A minute's figures, and the machine's load average as it ends: the machine may be shared, and the load says with how much. */
function minuteRow(index: number, minute: Minute): string[] {
  const sorted = minute.latencies.sort((a, b) => a - b);
  return [
    String(index + 1),
    loadavg()[0]!.toFixed(1),
    String(minute.requests),
    (minute.requests / 60).toFixed(0),
    String(minute.errors),
    milliseconds(percentile(sorted, 0.5)),
    milliseconds(percentile(sorted, 0.99)),
    ...minute.rss.map((samples) => megabytes(samples.length === 0 ? Number.NaN : mean(samples))),
  ];
}

function markdownTable(rows: string[][]): string {
  const [head, ...body] = rows;
  return [head!, head!.map(() => '---'), ...body].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

async function setUpAccounts(cluster: RunningCluster, count: number): Promise<ReturnType<typeof newAccount>[]> {
  const accounts = Array.from({ length: count }, () => newAccount('soak'));
  for (let first = 0; first < accounts.length; first += SETUP_CONCURRENCY) {
    await Promise.all(accounts.slice(first, first + SETUP_CONCURRENCY).map((account) => signUpAndConfirm(cluster, account)));
  }
  return accounts;
}

async function soak(cluster: RunningCluster, minutes: number): Promise<void> {
  const people = PEOPLE.token + PEOPLE.session + PEOPLE.pages + PEOPLE.login;
  const accounts = await setUpAccounts(cluster, people);
  const minuteList: Minute[] = Array.from({ length: minutes }, () => ({ requests: 0, errors: 0, latencies: [], rss: cluster.instances.map(() => []) }));
  const kinds = new Map<string, KindTotals>();
  const errorMessages = new Map<string, number>();
  const started = performance.now();
  let running = true;
  const current = (): Minute | undefined => minuteList[Math.floor((performance.now() - started) / MINUTE_MS)];
  const noteError = (error: string): void => {
    errorMessages.set(error, (errorMessages.get(error) ?? 0) + 1);
  };

  const traffic: Traffic = {
    cluster,
    running: () => running,
    record(kind, ms, error) {
      const minute = current();
      if (!minute) return;
      minute.requests += 1;
      minute.latencies.push(ms);
      const totals = kinds.get(kind) ?? { requests: 0, errors: 0, latencies: [] };
      kinds.set(kind, totals);
      totals.requests += 1;
      totals.latencies.push(ms);
      if (error === undefined) return;
      minute.errors += 1;
      totals.errors += 1;
      noteError(error);
    },
    fault(error) {
      const minute = current();
      if (minute) minute.errors += 1;
      noteError(error);
    },
  };
  const loop = (run: () => Promise<void>): Promise<void> => run().catch((error: unknown) => traffic.fault(`a person stopped: ${error instanceof Error ? error.message : String(error)}`));
  let next = 0;
  const take = (count: number) => accounts.slice(next, (next += count));
  const loops = [
    ...take(PEOPLE.token).map((account) => loop(() => tokenUser(traffic, account))),
    ...take(PEOPLE.session).map((account) => loop(() => sessionUser(traffic, account))),
    ...take(PEOPLE.pages).map((account) => loop(() => pagesUser(traffic, account))),
    ...take(PEOPLE.login).map((account) => loop(() => loginUser(traffic, account))),
    ...Array.from({ length: PEOPLE.signup }, () => loop(() => signupUser(traffic))),
  ];
  const sampler = setInterval(() => {
    const minute = current();
    cluster.instances.forEach((instance, index) => {
      const bytes = instance.rssBytes();
      if (minute && bytes !== undefined) minute.rss[index]!.push(bytes);
    });
  }, RSS_SAMPLE_MS);

  const header = ['minute', 'load', 'requests', 'req/s', 'errors', 'p50 ms', 'p99 ms', ...cluster.instances.map((_, index) => `RSS ${index + 1} MB`)];
  console.log(header.join('\t'));
  const rows: string[][] = [];
  for (let index = 0; index < minutes; index++) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + (index + 1) * MINUTE_MS - performance.now())));
    rows.push(minuteRow(index, minuteList[index]!));
    console.log(rows.at(-1)!.join('\t'));
  }
  running = false;
  clearInterval(sampler);
  await Promise.all(loops);

  console.log(`\n${markdownTable([header, ...rows])}\n`);
  console.log(
    markdownTable([
      ['kind', 'requests', 'errors', 'p50 ms', 'p99 ms'],
      ...[...kinds].map(([kind, totals]) => {
        const sorted = totals.latencies.sort((a, b) => a - b);
        return [kind, String(totals.requests), String(totals.errors), milliseconds(percentile(sorted, 0.5)), milliseconds(percentile(sorted, 0.99))];
      }),
    ]),
  );
  console.log(`\nrequests handed to each instance by the proxy: ${cluster.proxy.served().join(', ')}`);
  for (const [message, count] of [...errorMessages].slice(0, 10)) console.log(`error (${count}×): ${message}`);
  judge(minuteList);
}

function judge(minuteList: Minute[]): void {
  const errors = minuteList.reduce((total, minute) => total + minute.errors, 0);
  const verdicts = [`errors: ${errors} (${errors === 0 ? 'met' : 'MISSED'}: zero errors)`];
  let passed = errors === 0;
  if (minuteList.length < 2) {
    verdicts.push('memory: not judged (needs at least 2 minutes)');
  } else {
    const second = minuteList[1]!;
    const last = minuteList.at(-1)!;
    second.rss.forEach((samples, index) => {
      const before = mean(samples);
      const after = mean(last.rss[index]!);
      const change = (after - before) / before;
      const met = change <= RSS_TOLERANCE;
      passed &&= met;
      verdicts.push(
        `memory of instance ${index + 1}: ${megabytes(before)} MB in minute 2, ${megabytes(after)} MB in minute ${minuteList.length} ` +
          `(${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}%; ${met ? 'met' : 'MISSED'}: at most ${RSS_TOLERANCE * 100}% above minute 2)`,
      );
    });
  }
  for (const verdict of verdicts) console.log(verdict);
  console.log(passed ? 'soak: PASSED' : 'soak: FAILED');
  if (!passed) process.exitCode = 1;
}

export async function benchmarkSoak(): Promise<void> {
  const minutes = minutesOption();
  process.env.TEST_DATABASE_URL ||= DEFAULT_POSTGRES_URL;
  const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;
  let database: SitePostgresDatabase;
  try {
    database = await createSitePostgresDatabase();
  } catch (error) {
    console.log(`soak: skipped. ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  const cluster = await startCluster({ database, redisUrl, startTimeoutMs: 120_000 });
  const stop = () => void cluster.stop().then(() => process.exit(130));
  process.once('SIGINT', stop);
  try {
    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    console.log(
      `two instances of the example site, NODE_ENV=production, rate limits on, Django's argon2 parameters; PostgreSQL ` +
        `${new URL(database.url).host}, Redis ${new URL(redisUrl).host}; ${availableParallelism()} × ${cpu}, ` +
        `${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; ${minutes} minutes; people: ${JSON.stringify(PEOPLE)}\n`,
    );
    await soak(cluster, minutes);
  } finally {
    process.off('SIGINT', stop);
    await cluster.stop();
  }
}
