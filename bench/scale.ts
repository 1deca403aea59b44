/**
 * Token authentication at scale (issue 20): GET /api/users/me/ with `Authorization: Token <key>`
 * against a database of 1,000,000 users of whom 100,000 hold a token, compared with the same
 * route against a database of 1,000 users who all hold one. The goal: p99 at 1,000,000 users at
 * most 1.2 times the p99 at 1,000. The same on SQLite and on PostgreSQL.
 *
 * Every request sends a key drawn at random from all the database's keys (autocannon's
 * setupRequest builds each request anew), so the lookups land all over the key-hash index, the
 * token table and the users table: at 1,000,000 users the pages a request reads are mostly not
 * the ones the previous requests read, as on a real site, where one hot key would measure a
 * cache instead. The token holders are every tenth user (every user at 1,000), spread over the
 * whole users table.
 *
 * How the databases are made: migrated by the library (openDatabase, usernameType 'username' as
 * the example site), then filled directly with the driver, which takes minutes where creating
 * users one by one would take hours: users `user<n>` (address `user<n>@example.com`, an unusable
 * password, active, joined a minute apart), with better-sqlite3's prepared insert in transactions
 * of 50,000 rows on SQLite and INSERT ... SELECT generate_series in statements of 100,000 on
 * PostgreSQL; tokens stored exactly as tokens/api-tokens.ts stores them (the keyed hash of the
 * key, and the key sealed under LATCHKEY_SECRET_KEY and bound to its user), with INSERT ... SELECT
 * unnest on PostgreSQL. The keys stay in this process to be sent; the server gets the same secret
 * key. Then ANALYZE (SQLite) or VACUUM ANALYZE (PostgreSQL), as a database that has been live for
 * a while would have its statistics and visibility map.
 *
 * How it measures: both databases' servers (bench/api-server.ts, the example site in production
 * mode) run at once, each checked with a random key (200 and the right user), each warmed up,
 * then measured in slices that alternate small, large, large, small, ... so that load from
 * elsewhere on the machine weighs on both alike: 50 connections, SECONDS_PER_SIZE seconds each in
 * all. autocannon's p50 and p99 are whole milliseconds; each size's figure is the mean of its
 * slices' (as bench/api.ts). Server CPU per request is the server process's CPU time (every
 * thread) over the requests it answered: what a request costs whatever else the machine does. On
 * PostgreSQL the lookup's other half runs in the backends of the server's connection pool; their
 * CPU per request is a column of its own, read from /proc (so only when PostgreSQL runs here).
 *
 * `--users=N` (or `--users N`, or BENCH_SCALE_USERS=N) makes the large database N users with N/10
 * tokens, for a quick try; 1,000,000 by default. Both databases of each kind are dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import autocannon from 'autocannon';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { parseDatabaseUrl } from '../packages/latchkey/src/config/database-url.js';
import { keyedHash } from '../packages/latchkey/src/core/crypto.js';
import { encryptSecret } from '../packages/latchkey/src/core/encryption.js';
import { openDatabase } from '../packages/latchkey/src/storage/database.js';
import { recordGoal } from './goals.js';
import { BenchServer, combine, postgresDatabase, printTable, sample, sqliteDatabase, type BenchDatabase, type Load, type Sample } from './harness.js';

const DEFAULT_LARGE_USERS = 1_000_000;
/** 100,000 tokens among 1,000,000 users. */
const TOKEN_HOLDERS_PER_USER = 0.1;
const SMALL: Population = { users: 1_000, tokens: 1_000 };
const GOAL_P99_RATIO = 1.2;

const CONNECTIONS = 50;
const WARM_UP_SECONDS = 5;
/** Measured time per size, in SLICES_PER_SIZE slices alternating with the other size's. */
const SECONDS_PER_SIZE = 10;
const SLICES_PER_SIZE = 4;

const SQLITE_ROWS_PER_TRANSACTION = 50_000;
const POSTGRES_USERS_PER_STATEMENT = 100_000;
const POSTGRES_TOKENS_PER_STATEMENT = 20_000;

/** What tokens/api-tokens.ts uses: the purpose of the keyed hash and the encryption, and the key's size. */
const TOKEN_PURPOSE = 'api-token';
const TOKEN_KEY_BYTES = 20;
/** The users' join dates start here, a minute apart. */
const FIRST_JOINED = Date.UTC(2020, 0, 1);
const MiB = 1024 * 1024;

interface Population {
  users: number;
  tokens: number;
}

/** A token as the database stores it, and the key a client sends. */
interface IssuedToken {
  userId: number;
  key: string;
  keyHash: string;
  sealedKey: string;
}

/** A database filled and ready to serve, with the keys of its tokens and what filling it took. */
interface FilledDatabase {
  population: Population;
  database: BenchDatabase;
  keys: string[];
  /** Each step's name and seconds: sealing the keys, inserting users, tokens, ANALYZE. */
  steps: Array<[string, number]>;
  sizeBytes: number;
}

const count = (value: number): string => value.toLocaleString('en');
const seconds = (milliseconds: number): number => milliseconds / 1000;

function largeUsersOption(): number {
  const index = process.argv.indexOf('--users');
  const given = index >= 0 ? process.argv[index + 1] : (process.argv.find((argument) => argument.startsWith('--users='))?.slice('--users='.length) ?? process.env.BENCH_SCALE_USERS);
  if (given === undefined || given === '') return DEFAULT_LARGE_USERS;
  const users = Number(given.replaceAll('_', ''));
  if (!Number.isInteger(users) || users < SMALL.users) throw new Error(`--users must be a whole number, at least ${SMALL.users}; got ${given}.`);
  return users;
}

/** The user of the i-th of `population.tokens` tokens: evenly spread over the users' ids (1..users). */
function tokenHolder(population: Population, index: number): number {
  return 1 + Math.floor((index * population.users) / population.tokens);
}

/** One token per holder, made as issueApiToken makes one: 20 random bytes, the keyed hash of their hex, the bytes sealed to the user. */
function issueTokens(population: Population, secretKey: string): IssuedToken[] {
  return Array.from({ length: population.tokens }, (_, index) => {
    const userId = tokenHolder(population, index);
    const bytes = randomBytes(TOKEN_KEY_BYTES);
    const key = bytes.toString('hex');
    return {
      userId,
      key,
      keyHash: keyedHash(secretKey, TOKEN_PURPOSE, key),
      sealedKey: encryptSecret(secretKey, TOKEN_PURPOSE, bytes, `latchkey:api-token:user:${userId}`),
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Filling a database

/** The bulk users: `user<n>`, `user<n>@example.com`, "User <n>", an unusable password, active, joined n minutes after 2020-01-01. */
function fillSqlite(file: string, population: Population, tokens: IssuedToken[], steps: Array<[string, number]>): number {
  const database = new BetterSqlite3(file);
  try {
    // This connection only: a crash mid-load loses a database the benchmark would drop anyway.
    database.pragma('synchronous = OFF');
    const insertUser = database.prepare(
      `insert into latchkey_users (id, username, username_key, email, name, password, is_active, is_staff, is_superuser, date_joined, last_login)
       values (?, ?, ?, ?, ?, '!', 1, 0, 0, ?, null)`,
    );
    const insertUsers = database.transaction((first: number, last: number) => {
      for (let n = first; n <= last; n++) {
        const username = `user${n}`;
        insertUser.run(n, username, username, `${username}@example.com`, `User ${n}`, new Date(FIRST_JOINED + n * 60_000).toISOString());
      }
    });
    let started = performance.now();
    for (let first = 1; first <= population.users; first += SQLITE_ROWS_PER_TRANSACTION) {
      insertUsers(first, Math.min(population.users, first + SQLITE_ROWS_PER_TRANSACTION - 1));
    }
    steps.push(['users', seconds(performance.now() - started)]);

    const insertToken = database.prepare('insert into latchkey_api_tokens (user_id, key_hash, sealed_key, created_at) values (?, ?, ?, ?)');
    const createdAt = new Date().toISOString();
    const insertTokens = database.transaction((batch: IssuedToken[]) => {
      for (const token of batch) insertToken.run(token.userId, token.keyHash, token.sealedKey, createdAt);
    });
    started = performance.now();
    for (let first = 0; first < tokens.length; first += SQLITE_ROWS_PER_TRANSACTION) insertTokens(tokens.slice(first, first + SQLITE_ROWS_PER_TRANSACTION));
    steps.push(['tokens', seconds(performance.now() - started)]);

    started = performance.now();
    database.exec('analyze');
    // Everything into the main file, so that its size is the database's and the server starts with an empty WAL.
    database.pragma('wal_checkpoint(TRUNCATE)');
    steps.push(['ANALYZE', seconds(performance.now() - started)]);
  } finally {
    database.close();
  }
  const walSize = (() => {
    try {
      return statSync(`${file}-wal`).size;
    } catch {
      return 0;
    }
  })();
  return statSync(file).size + walSize;
}

const POSTGRES_INSERT_USERS = `
  insert into latchkey_users (id, username, username_key, email, name, password, is_active, is_staff, is_superuser, date_joined, last_login)
  select n, 'user' || n, 'user' || n, 'user' || n || '@example.com', 'User ' || n, '!', true, false, false,
         timestamptz '2020-01-01 00:00:00+00' + n * interval '1 minute', null
  from generate_series($1::int, $2::int) as n`;

const POSTGRES_INSERT_TOKENS = `
  insert into latchkey_api_tokens (user_id, key_hash, sealed_key, created_at)
  select user_id, key_hash, sealed_key, now()
  from unnest($1::int[], $2::text[], $3::text[]) as token(user_id, key_hash, sealed_key)`;

async function fillPostgres(url: string, population: Population, tokens: IssuedToken[], steps: Array<[string, number]>): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let started = performance.now();
    for (let first = 1; first <= population.users; first += POSTGRES_USERS_PER_STATEMENT) {
      await client.query(POSTGRES_INSERT_USERS, [first, Math.min(population.users, first + POSTGRES_USERS_PER_STATEMENT - 1)]);
    }
    // The ids were given, not drawn: the identity column's sequence must go past them, or the
    // server's own user (created at its start) would take id 1 again.
    await client.query(`select setval(pg_get_serial_sequence('latchkey_users', 'id'), $1::bigint)`, [population.users]);
    steps.push(['users', seconds(performance.now() - started)]);

    started = performance.now();
    for (let first = 0; first < tokens.length; first += POSTGRES_TOKENS_PER_STATEMENT) {
      const batch = tokens.slice(first, first + POSTGRES_TOKENS_PER_STATEMENT);
      await client.query(POSTGRES_INSERT_TOKENS, [batch.map((token) => token.userId), batch.map((token) => token.keyHash), batch.map((token) => token.sealedKey)]);
    }
    steps.push(['tokens', seconds(performance.now() - started)]);

    started = performance.now();
    await client.query('vacuum analyze latchkey_users, latchkey_api_tokens');
    steps.push(['VACUUM ANALYZE', seconds(performance.now() - started)]);
    const size = await client.query<{ bytes: string }>('select pg_database_size(current_database()) as bytes');
    return Number(size.rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

async function fill(database: BenchDatabase, population: Population, secretKey: string): Promise<FilledDatabase> {
  // The schema is the library's own, every index included, as a deployment's `manage migrate` makes it.
  const library = await openDatabase({ url: database.url, usernameType: 'username' });
  try {
    await library.migrate();
  } finally {
    await library.close();
  }
  const steps: Array<[string, number]> = [];
  const started = performance.now();
  const tokens = issueTokens(population, secretKey);
  steps.push(['sealing keys', seconds(performance.now() - started)]);
  const sizeBytes =
    database.kind === 'sqlite'
      ? fillSqlite((parseDatabaseUrl(database.url) as { filename: string }).filename, population, tokens, steps)
      : await fillPostgres(database.url, population, tokens, steps);
  return { population, database, keys: tokens.map((token) => token.key), steps, sizeBytes };
}

// ---------------------------------------------------------------------------------------------
// Measuring

/** Clock ticks per second in /proc/<pid>/stat: USER_HZ, 100 on every Linux that Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * The CPU time of the PostgreSQL backends serving one database (the server's connection pool),
 * read from /proc: on PostgreSQL the token lookup's cost is split between the server process and
 * these, and a bigger database costs more on this side. Undefined when they cannot be read
 * (PostgreSQL on another machine).
 */
class BackendCpu {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<BackendCpu> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return new BackendCpu(client);
  }

  /** CPU seconds so far of each backend connected to the database but this one, by process id. */
  async read(): Promise<Map<number, number> | undefined> {
    const { rows } = await this.client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    const seconds = new Map<number, number>();
    for (const { pid } of rows) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        return undefined;
      }
      // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds.set(pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    }
    return seconds;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/** CPU seconds the backends used between two readings; a backend that started in between counts whole. */
function backendCpuBetween(before: Map<number, number> | undefined, after: Map<number, number> | undefined): number | undefined {
  if (before === undefined || after === undefined) return undefined;
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/** The token route, each request with a key drawn at random from `keys`. */
function tokenRouteOptions(server: BenchServer, keys: string[], duration: number): autocannon.Options {
  const randomKey = () => keys[Math.floor(Math.random() * keys.length)]!;
  return {
    url: `${server.base}/api/users/me/`,
    connections: CONNECTIONS,
    duration,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, authorization: `Token ${randomKey()}` } }) }],
  };
}

/** A random key must find its own user: otherwise the tokens were not stored as the library stores them. */
async function checkRandomKey(server: BenchServer, filled: FilledDatabase): Promise<void> {
  const index = Math.floor(Math.random() * filled.keys.length);
  const response = await fetch(`${server.base}/api/users/me/`, { headers: { authorization: `Token ${filled.keys[index]!}` } });
  const body = await response.text();
  const expected = `user${tokenHolder(filled.population, index)}`;
  if (response.status !== 200 || (JSON.parse(body) as { username?: unknown }).username !== expected) {
    throw new Error(`GET /api/users/me/ with the key of ${expected} answered ${response.status}: ${body.slice(0, 200)}`);
  }
}

function sizeLabel(population: Population): string {
  return `${count(population.users)} users`;
}

async function benchmarkOn(small: BenchDatabase, large: BenchDatabase, largeUsers: number): Promise<void> {
  const populations: Population[] = [SMALL, { users: largeUsers, tokens: Math.max(1, Math.round(largeUsers * TOKEN_HOLDERS_PER_USER)) }];
  const secretKey = randomBytes(48).toString('base64url');
  const filled: FilledDatabase[] = [];
  for (const [index, database] of [small, large].entries()) {
    const population = populations[index]!;
    const started = performance.now();
    const one = await fill(database, population, secretKey);
    filled.push(one);
    console.log(
      `${sizeLabel(population)}, ${count(population.tokens)} tokens: filled in ${seconds(performance.now() - started).toFixed(1)} s ` +
        `(${one.steps.map(([step, time]) => `${step} ${time.toFixed(1)} s`).join(', ')}); database ${(one.sizeBytes / MiB).toFixed(0)} MiB`,
    );
  }

  const servers: BenchServer[] = [];
  const backends: BackendCpu[] = [];
  try {
    if (small.kind === 'postgres') for (const one of filled) backends.push(await BackendCpu.open(one.database.url));
    for (const one of filled) servers.push(await BenchServer.start(one.database.url, { LATCHKEY_SECRET_KEY: secretKey }));
    const { ready } = servers[0]!;
    console.log(
      `server: the example site, NODE_ENV=production, rate limits off; ${ready.argon2}; ` +
        `${availableParallelism()} CPUs; Node ${process.version}; both servers running, one measured at a time`,
    );
    for (const [index, server] of servers.entries()) await checkRandomKey(server, filled[index]!);

    // JIT, the connection pool, the caches (SQLite's pages, PostgreSQL's shared buffers): each server warmed first.
    for (const [index, server] of servers.entries()) await autocannon(tokenRouteOptions(server, filled[index]!.keys, WARM_UP_SECONDS));
    const samples: Sample[][] = [[], []];
    /** PostgreSQL only: CPU seconds of each size's backends over its slices (undefined when unreadable). */
    const backendSeconds: Array<number | undefined> = backends.length === 0 ? [] : [0, 0];
    const sliceSeconds = SECONDS_PER_SIZE / SLICES_PER_SIZE;
    // small, large, large, small, small, large, ...: each size goes first as often as the other.
    const order = Array.from({ length: SLICES_PER_SIZE }, (_, slice) => (slice % 2 === 0 ? [0, 1] : [1, 0])).flat();
    for (const index of order) {
      const before = await backends[index]?.read();
      samples[index]!.push(await sample(servers[index]!, tokenRouteOptions(servers[index]!, filled[index]!.keys, sliceSeconds)));
      const used = backendCpuBetween(before, await backends[index]?.read());
      if (backendSeconds.length > 0) backendSeconds[index] = used === undefined || backendSeconds[index] === undefined ? undefined : backendSeconds[index] + used;
    }
    const loads: Load[] = samples.map(combine);

    console.log(
      `\nGET /api/users/me/, a random key each request: ${CONNECTIONS} connections, ${SECONDS_PER_SIZE} s per size in ${SLICES_PER_SIZE} slices ` +
        `(small, large, large, small, ...) after ${WARM_UP_SECONDS} s of warm-up; load average ${loadavg()[0]!.toFixed(1)}\n`,
    );
    const [smallLoad, largeLoad] = [loads[0]!, loads[1]!];
    const ratio = (pick: (load: Load) => number) => `${(pick(largeLoad) / pick(smallLoad)).toFixed(2)}x`;
    /** µs of PostgreSQL backend CPU per request, for each size; empty on SQLite (its work is in the server's CPU). */
    const backendPerRequest = backendSeconds.map((used, index) => (used === undefined ? undefined : (used * 1e6) / Math.max(samples[index]!.reduce((total, one) => total + one.requests, 0), 1)));
    const backendColumn = backends.length > 0;
    const backendCell = (index: number) => (backendColumn ? [backendPerRequest[index] === undefined ? 'n/a' : backendPerRequest[index].toFixed(0)] : []);
    const backendRatio = backendPerRequest[0] !== undefined && backendPerRequest[1] !== undefined ? `${(backendPerRequest[1] / backendPerRequest[0]).toFixed(2)}x` : '';
    printTable([
      ['database', 'tokens', 'size MiB', 'req/s', 'p50 ms', 'p99 ms', 'server CPU', 'CPU µs/req', ...(backendColumn ? ['PostgreSQL CPU µs/req'] : []), 'failures'],
      ...filled.map((one, index) => {
        const load = loads[index]!;
        return [
          sizeLabel(one.population),
          count(one.population.tokens),
          (one.sizeBytes / MiB).toFixed(0),
          load.requestsPerSecond.toFixed(0),
          load.p50.toFixed(1),
          load.p99.toFixed(1),
          `${(load.serverCores * 100).toFixed(0)}%`,
          load.cpuPerRequest.toFixed(0),
          ...backendCell(index),
          load.failures || 'none',
        ];
      }),
      [
        `${count(largeUsers)} vs ${count(SMALL.users)}`,
        '',
        '',
        ratio((load) => load.requestsPerSecond),
        ratio((load) => load.p50),
        ratio((load) => load.p99),
        '',
        ratio((load) => load.cpuPerRequest),
        ...(backendColumn ? [backendRatio] : []),
        '',
      ],
    ]);
    const p99Ratio = largeLoad.p99 / smallLoad.p99;
    const failed = loads.some((load) => load.failures !== '');
    recordGoal({
      measure: `token route p99, ${sizeLabel(populations[1]!)} vs ${sizeLabel(SMALL)}, ${small.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
      today: `${p99Ratio.toFixed(2)}x`,
      goal: `<= ${GOAL_P99_RATIO}x`,
      met: p99Ratio <= GOAL_P99_RATIO && !failed,
    });
    console.log(
      `goal: p99 at ${sizeLabel(populations[1]!)} at most ${GOAL_P99_RATIO}x the p99 at ${sizeLabel(SMALL)}: ` +
        `${p99Ratio.toFixed(2)}x (${p99Ratio <= GOAL_P99_RATIO && !failed ? 'met' : 'MISSED'}${failed ? ', with failures' : ''})`,
    );
  } finally {
    for (const server of servers) await server.stop();
    for (const one of backends) await one.close();
  }
}

export async function benchmarkScale(): Promise<void> {
  const largeUsers = largeUsersOption();

  console.log('### SQLite\n');
  const sqlite = [await sqliteDatabase(), await sqliteDatabase()] as const;
  try {
    await benchmarkOn(sqlite[0], sqlite[1], largeUsers);
  } finally {
    for (const database of sqlite) await database.drop();
  }

  console.log('\n### PostgreSQL\n');
  const small = await postgresDatabase();
  if (typeof small === 'string') {
    console.log(`Skipped. ${small}`);
    return;
  }
  const large = await postgresDatabase();
  if (typeof large === 'string') {
    await small.drop();
    console.log(`Skipped. ${large}`);
    return;
  }
  console.log(`${small.label.replace(/, new database .*/, '')}: new databases, dropped at the end\n`);
  try {
    await benchmarkOn(small, large, largeUsers);
  } finally {
    await small.drop();
    await large.drop();
  }
}
