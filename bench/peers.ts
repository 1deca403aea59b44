/**
 * Latchkey beside better-auth, in the same run on the same machine (issue 20): what it costs a
 * server to authenticate one API request with each.
 *
 * - Latchkey: the example site (bench/api-server.ts, as bench/api.ts runs it), GET /api/users/me/
 *   with `Authorization: Token <key>`, and its bare route (the same JSON, no authentication).
 * - better-auth (bench/better-auth-server.ts): GET /api/auth/get-session with
 *   `Authorization: Bearer <session token>` (email+password, the bearer plugin, rate limiter off,
 *   plain node:http), and a bare route on the same server answering get-session's JSON.
 *
 * Both run on SQLite (better-sqlite3) files in new temporary directories, NODE_ENV=production,
 * rate limits off, each in its own child process so that autocannon's CPU use, here in the
 * parent, is charged to neither. Each route gets req/s, p50, p99 and the server's CPU per request.
 *
 * The goal is on CPU per request: better-auth's get-session costs at least 40 times Latchkey's
 * token check. CPU per request is what a request costs whatever else the machine is doing;
 * req/s also depends on how much of the machine each server got and on autocannon keeping up,
 * so the req/s ratio is printed beside it but is not the goal. The routes are measured
 * interleaved (A B C D, then D C B A) so that load from elsewhere on the machine that grows or
 * fades during the run weighs on both libraries alike.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { PeerChildMessage, PeerParentMessage } from './better-auth-server.js';
import { recordGoal } from './goals.js';
import { BenchServer, combine, printTable, sample, sqliteDatabase, type Load, type Sample } from './harness.js';

/** Concurrent connections: far more than one core can serve, so each server is saturated. */
const CONNECTIONS = 50;
const WARM_UP_SECONDS = 3;
const SECONDS_PER_ROUTE = 10;
/** better-auth's get-session CPU per request over Latchkey's token check's. */
const CPU_RATIO_GOAL = 40;
const SERVER_START_TIMEOUT_MS = 120_000;

// ---------------------------------------------------------------------------------------------
// The better-auth server process

type PeerReady = Extract<PeerChildMessage, { type: 'ready' }>;

/** bench/better-auth-server.ts in a child process: BenchServer's counterpart for better-auth. */
class BetterAuthServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly ready: PeerReady,
  ) {}

  static async start(): Promise<BetterAuthServer> {
    // BENCH_CPU_PROFILE_DIR profiles this server too, as bench/harness.ts does Latchkey's.
    const profile = process.env.BENCH_CPU_PROFILE_DIR;
    const child = fork(fileURLToPath(new URL('./better-auth-server.ts', import.meta.url)), [], {
      execArgv: ['--import', import.meta.resolve('tsx'), ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, NODE_ENV: 'production' },
    });
    try {
      const ready = await nextMessage(child, SERVER_START_TIMEOUT_MS);
      if (ready.type !== 'ready') throw new Error(`The better-auth server answered ${ready.type} instead of ready.`);
      return new BetterAuthServer(child, ready);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  get base(): string {
    return `http://127.0.0.1:${this.ready.port}`;
  }

  /** Seconds of CPU the server process has used so far (all its threads). */
  async cpuSeconds(): Promise<number> {
    const reply = nextMessage(this.child, 5000);
    this.child.send({ type: 'cpu' } satisfies PeerParentMessage);
    const received = await reply;
    if (received.type !== 'cpu') throw new Error(`The better-auth server answered ${received.type} instead of cpu.`);
    return received.microseconds / 1e6;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const force = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    this.child.send({ type: 'stop' } satisfies PeerParentMessage);
    await exited;
    clearTimeout(force);
  }
}

function nextMessage(child: ChildProcess, timeoutMs: number): Promise<PeerChildMessage> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: PeerChildMessage) => {
      cleanup();
      if (message.type === 'failed') reject(new Error(`The better-auth server failed: ${message.message}`));
      else resolve(message);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`The better-auth server exited (code ${code ?? 'none'}).`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`The better-auth server did not answer within ${timeoutMs / 1000} s.`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

// ---------------------------------------------------------------------------------------------
// Routes

interface Route {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** One autocannon run against this route, with its own server's CPU over it. */
  sample: (options: autocannon.Options) => Promise<Sample>;
}

/**
 * Each route answers 200, and the authenticated route answers the same JSON as its bare route:
 * better-auth's get-session answers 200 with `null` to a request it does not authenticate, so
 * the status alone would let a broken token be measured as a fast route.
 */
async function checkRoutes(bare: Route, authenticated: Route): Promise<void> {
  const bodies = await Promise.all(
    [bare, authenticated].map(async (route) => {
      const response = await fetch(route.url, { headers: route.headers });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${route.name} answered ${response.status}: ${body.slice(0, 200)}`);
      return { route, body, json: JSON.stringify(JSON.parse(body)) };
    }),
  );
  for (const { route, body, json } of bodies) {
    if (json === 'null') throw new Error(`${route.name} answered null: it did not authenticate the request (${body.slice(0, 200)}).`);
  }
  if (bodies[0]!.json !== bodies[1]!.json) throw new Error(`${bare.name} and ${authenticated.name} answer different JSON: ${bodies[0]!.body} / ${bodies[1]!.body}`);
}

/** A B C D, then D C B A: see the top of this file. */
async function measureRoutes(routes: Route[]): Promise<Load[]> {
  const samples = routes.map((): Sample[] => []);
  const order = [...routes.keys(), ...[...routes.keys()].reverse()];
  for (const index of order) {
    const route = routes[index]!;
    samples[index]!.push(await route.sample({ url: route.url, headers: route.headers, connections: CONNECTIONS, duration: SECONDS_PER_ROUTE / 2 }));
  }
  return samples.map(combine);
}

// ---------------------------------------------------------------------------------------------
// The benchmark

export async function benchmarkPeers(): Promise<void> {
  const database = await sqliteDatabase();
  let latchkey: BenchServer | undefined;
  let betterAuth: BetterAuthServer | undefined;
  try {
    // One after the other: each builds its database and signs its user up at full speed.
    latchkey = await BenchServer.start(database.url);
    betterAuth = await BetterAuthServer.start();
    const latchkeyServer = latchkey;
    const betterAuthServer = betterAuth;
    console.log(
      `Latchkey: the example site on ${database.label}; better-auth ${betterAuthServer.ready.betterAuthVersion} on node:http (toNodeHandler), ` +
        `better-sqlite3 on its own temporary file; both NODE_ENV=production, rate limits off; Node ${process.version}; ${availableParallelism()} CPUs`,
    );

    const latchkeyBare: Route = {
      name: 'Latchkey bare route, no authentication',
      url: `${latchkeyServer.base}${latchkeyServer.ready.bareRoute}`,
      headers: {},
      sample: (options) => sample(latchkeyServer, options),
    };
    const latchkeyToken: Route = {
      name: 'Latchkey GET /api/users/me/, Token',
      url: `${latchkeyServer.base}/api/users/me/`,
      headers: { authorization: `Token ${latchkeyServer.ready.token}` },
      sample: (options) => sample(latchkeyServer, options),
    };
    const betterAuthBare: Route = {
      name: 'better-auth bare route, no authentication',
      url: `${betterAuthServer.base}${betterAuthServer.ready.bareRoute}`,
      headers: {},
      sample: (options) => sample(betterAuthServer, options),
    };
    const betterAuthSession: Route = {
      name: `better-auth GET ${betterAuthServer.ready.sessionRoute}, Bearer`,
      url: `${betterAuthServer.base}${betterAuthServer.ready.sessionRoute}`,
      headers: { authorization: `Bearer ${betterAuthServer.ready.token}` },
      sample: (options) => sample(betterAuthServer, options),
    };
    await checkRoutes(latchkeyBare, latchkeyToken);
    await checkRoutes(betterAuthBare, betterAuthSession);

    const routes = [latchkeyBare, latchkeyToken, betterAuthBare, betterAuthSession];
    // Warm every route first (JIT, SQLite's page cache), then measure each.
    for (const route of routes) await autocannon({ url: route.url, headers: route.headers, connections: CONNECTIONS, duration: WARM_UP_SECONDS });
    const [latchkeyBareLoad, latchkeyTokenLoad, betterAuthBareLoad, betterAuthSessionLoad] = (await measureRoutes(routes)) as [Load, Load, Load, Load];
    /** Each route's own server's bare route: what the server does before any authentication. */
    const bareOf = [latchkeyBareLoad, latchkeyBareLoad, betterAuthBareLoad, betterAuthBareLoad];
    const loads = [latchkeyBareLoad, latchkeyTokenLoad, betterAuthBareLoad, betterAuthSessionLoad];

    console.log(`\n${CONNECTIONS} connections, ${SECONDS_PER_ROUTE} s per route (two halves: A B C D, D C B A) after ${WARM_UP_SECONDS} s of warm-up each\n`);
    printTable([
      ['route', 'req/s', 'p50 ms', 'p99 ms', 'vs own bare', 'server CPU', 'CPU µs/req', 'failures'],
      ...routes.map((route, index) => {
        const row = loads[index]!;
        return [
          route.name,
          row.requestsPerSecond.toFixed(0),
          row.p50.toFixed(0),
          row.p99.toFixed(0),
          (row.requestsPerSecond / bareOf[index]!.requestsPerSecond).toFixed(2),
          `${(row.serverCores * 100).toFixed(0)}%`,
          row.cpuPerRequest.toFixed(0),
          row.failures || 'none',
        ];
      }),
    ]);

    const byCpu = betterAuthSessionLoad.cpuPerRequest / latchkeyTokenLoad.cpuPerRequest;
    const byRequests = latchkeyTokenLoad.requestsPerSecond / betterAuthSessionLoad.requestsPerSecond;
    console.log('\ntoken check vs better-auth get-session bearer (same machine, same run):');
    console.log(
      `  by server CPU per request: better-auth ${betterAuthSessionLoad.cpuPerRequest.toFixed(0)} µs ÷ Latchkey ${latchkeyTokenLoad.cpuPerRequest.toFixed(0)} µs = ` +
        `${byCpu.toFixed(1)}x (goal >= ${CPU_RATIO_GOAL}x: ${byCpu >= CPU_RATIO_GOAL ? 'met' : 'MISSED'})`,
    );
    console.log(
      `  by req/s: Latchkey ${latchkeyTokenLoad.requestsPerSecond.toFixed(0)} ÷ better-auth ${betterAuthSessionLoad.requestsPerSecond.toFixed(0)} = ${byRequests.toFixed(1)}x`,
    );
    recordGoal({ measure: 'token check vs better-auth get-session bearer: server CPU per request', today: `${byCpu.toFixed(1)}x`, goal: `>= ${CPU_RATIO_GOAL}x`, met: byCpu >= CPU_RATIO_GOAL });
  } finally {
    await Promise.all([latchkey?.stop(), betterAuth?.stop()]);
    await database.drop();
  }
}
