/**
 * What authentication costs an API request, on SQLite and on PostgreSQL:
 *
 * - GET /api/users/me/ with `Authorization: Token <key>`, the same with a session cookie, and a
 *   bare route on the same Fastify instance answering the same JSON with no authentication:
 *   requests/s, p50, p99, and the server's CPU per request, each as a fraction of the bare route's
 *   (bare CPU per request ÷ the route's: 1.0 would be authentication costing nothing). The goal is
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
import autocannon from 'autocannon';
import { recordGoal } from './goals.js';
import { BenchServer, serverDescription, combine, onEachDatabase, printTable, sample, type BenchDatabase, type Load, type Sample } from './harness.js';

/** Concurrent connections for the GET routes: far more than one core can serve, so the server is saturated. */
const CONNECTIONS = 50;
const WARM_UP_SECONDS = 3;
const SECONDS_PER_ROUTE = 10;
/** Concurrent logins: more than PASSWORD_HASHING_CONCURRENCY, so the hashing slots never wait for work. */
const LOGIN_CONNECTIONS = 8;
const LOGIN_SECONDS = 10;
const HASHING_SECONDS = 10;
const GOALS = { sqlite: 0.6, postgres: 0.4 } as const;

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

// ---------------------------------------------------------------------------------------------
// One database

async function benchmarkOn(database: BenchDatabase): Promise<void> {
  console.log(`### ${database.label}\n`);
  const server = await BenchServer.start(database.url);
  try {
    const { ready } = server;
    console.log(serverDescription(ready));
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
      const ratio = loads[0]!.cpuPerRequest / loads[index + 1]!.cpuPerRequest;
      const credential = route.name.replace('GET /api/users/me/, ', '');
      recordGoal({ measure: `${credential}, ${database.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: server CPU per request vs bare`, today: ratio.toFixed(2), goal: `>= ${goal}`, met: ratio >= goal });
      return `${credential} ${ratio.toFixed(2)} (${ratio >= goal ? 'met' : 'MISSED'})`;
    });
    console.log(`goal: at least ${goal} of the bare route, by server CPU per request: ${verdicts.join('; ')}`);

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
    const loginRatio = logins.requestsPerSecond / hashesPerSecond;
    recordGoal({ measure: `logins per second vs raw argon2 verifications, ${database.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`, today: loginRatio.toFixed(2), goal: '>= 0.9', met: loginRatio >= 0.9 });
  } finally {
    await server.stop();
  }
}

export async function benchmarkApi(): Promise<void> {
  await onEachDatabase(benchmarkOn);
}
