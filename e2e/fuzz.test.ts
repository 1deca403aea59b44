/**
 * The fuzzer (issue 19): every route in the example site's route table, each with a fixed set of
 * malformed inputs (e2e/fuzz-inputs.ts: some sent to every route, the rest shared out between the
 * routes in turn), anonymously and signed in (a session as cookie and X-Session-Token, an API
 * token on /api/, a staff session on the admin), on SQLite and on PostgreSQL when
 * TEST_DATABASE_URL is set. No input may get a 5xx, take more than 5 s, or show a stack trace, a
 * source path or the engine's own messages, in the answer or in the site's log.
 *
 * Requests go through Fastify's inject(), without a socket, in a few lanes of their own (see
 * LANES), each lane's requests one at a time, so that what each route is sent, and by whom,
 * repeats exactly from run to run. Counters stay in the database, without Redis: what is fuzzed is how each door
 * reads its input, and the instances that share Redis have tests of their own.
 */
import { testDatabaseKinds } from '@latchkey/core/testing';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUZZ_CASES, HUGE_BODY, ordinaryParameter, pathWith, requestsOf, takesBody, type FuzzCase, type FuzzRequest, type FuzzRoute } from './fuzz-inputs.js';
import { CSRF_SECRET, KNOWN_PARAMETERS, LANES, startFuzzSite, type FuzzSite, type Identity } from './fuzz-site.js';

const DEADLINE_MS = 5000;
/** The inputs that reach the handlers: sent by every identity, on every database (the rest once, anonymously, on SQLite). */
const HANDLER_CASES = FUZZ_CASES.filter((fuzzCase) => fuzzCase.reachesHandlers);
/** A failing walk lists this many of its failures, enough to see the pattern. */
const SHOWN_FAILURES = 40;

/** What in an answer gives the server away: a stack frame, a path on the server or into node_modules, the word "stack". */
const BODY_LEAKS: [RegExp, string][] = [
  [/\bat (?:async )?[\w.<>$[\] ]*\(?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+/, 'a stack frame'],
  [/(?:\n|\\n)\s*at [^\n]*?:\d+:\d+\)?/, 'a stack frame'],
  [/node_modules/, 'a path into node_modules'],
  [/\/(?:work|home|usr|tmp|root|app|srv|opt)\/[\w./@-]+\.(?:[cm]?[jt]s)\b/, 'a source file path'],
  // The admin's provider list offers "Stack Exchange", which is no leak.
  [/\bstack\b(?! exchange)/i, 'the word "stack"'],
];

/** The content types of the static files the site serves as shipped. */
const SHIPPED_FILE_TYPES = /^(?:text|application)\/javascript|^text\/css/;

let requestCount = 0;

/**
 * A different client address for every request: per-IP rate limits would otherwise answer 429
 * to nearly everything after the first few routes and hide the handlers behind them. Limits per
 * account still apply (and 429 is a fine answer).
 */
function nextAddress(): string {
  requestCount++;
  return `10.${(requestCount >> 16) & 255}.${(requestCount >> 8) & 255}.${requestCount & 255}`;
}

function cookieHeader(identity: Identity, request: FuzzRequest): string {
  if (request.cookies !== undefined) return request.cookies;
  return Object.entries({ csrftoken: CSRF_SECRET, ...identity.cookies }).map(([name, value]) => `${name}=${value}`).join('; ');
}

async function withinDeadline(answer: Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse | 'too slow'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'too slow'>((resolve) => (timer = setTimeout(() => resolve('too slow'), DEADLINE_MS)));
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why the answer fails the fuzzer, or undefined when it is fine. */
function problemWith(response: LightMyRequestResponse | 'too slow'): string | undefined {
  if (response === 'too slow') return `no answer within ${DEADLINE_MS / 1000} s`;
  if (response.statusCode >= 500) return `${response.statusCode}: ${response.body.slice(0, 300)}`;
  // A script or stylesheet that was found is a file shipped as it is (Swagger UI's bundle names
  // `this.stack`), the same bytes whatever was asked: the leak words are for what the server writes.
  if (response.statusCode === 200 && SHIPPED_FILE_TYPES.test(String(response.headers['content-type'] ?? ''))) return undefined;
  for (const [pattern, what] of BODY_LEAKS) {
    const found = pattern.exec(response.body);
    if (found) return `${response.statusCode} with ${what}: ...${response.body.slice(Math.max(0, found.index - 150), found.index + 150)}...`;
  }
  return undefined;
}

/** Sends one request; returns a line describing the failure, or undefined. */
async function send(site: FuzzSite, identity: Identity, route: FuzzRoute, fuzzCase: FuzzCase, request: FuzzRequest): Promise<string | undefined> {
  const options: InjectOptions = {
    method: route.method,
    url: request.url,
    remoteAddress: nextAddress(),
    headers: { host: 'testserver', 'x-csrftoken': CSRF_SECRET, ...identity.headers, ...request.headers, cookie: cookieHeader(identity, request) },
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  };
  const where = `${identity.name} ${route.method} ${route.url} [${fuzzCase.name}] ${request.url.slice(0, 120)}`;
  try {
    const problem = problemWith(await withinDeadline(site.app.inject(options)));
    return problem === undefined ? undefined : `${where}: ${problem}`;
  } catch (error) {
    return `${where}: inject failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The given cases for one route, for one identity; the failures found. */
async function fuzzRoute(site: FuzzSite, route: FuzzRoute, identity: Identity, cases: readonly FuzzCase[]): Promise<string[]> {
  const failures: string[] = [];
  const path = pathWith(route.url, (name) => ordinaryParameter(name, KNOWN_PARAMETERS));
  // The place in the whole table, so that a route gets the same variants whoever sends them.
  const index = site.routes.indexOf(route);
  for (const fuzzCase of cases) {
    for (const request of requestsOf(fuzzCase, route, path, index)) {
      const failure = await send(site, identity, route, fuzzCase, request);
      if (failure !== undefined) failures.push(failure);
    }
  }
  return failures;
}

/**
 * The given cases for every route, the routes dealt out to LANES lanes that run at once, each
 * route in turn within its lane, with an identity made fresh for it (`identityFor(lane)`).
 */
async function walk(site: FuzzSite, routes: FuzzRoute[], identityFor: (lane: number) => Identity | Promise<Identity>, cases: readonly FuzzCase[]): Promise<string[]> {
  const lanes = Array.from({ length: LANES }, async (_, lane) => {
    const failures: string[] = [];
    for (let i = lane; i < routes.length; i += LANES) failures.push(...(await fuzzRoute(site, routes[i]!, await identityFor(lane), cases)));
    return failures;
  });
  return (await Promise.all(lanes)).flat();
}

/** The failures and the suspicious log lines, as one list for a readable assertion. */
function report(failures: string[], site: FuzzSite): string[] {
  const logged = site.log.take().map((line) => `log: ${line}`);
  const all = [...failures, ...logged];
  return all.length > SHOWN_FAILURES ? [...all.slice(0, SHOWN_FAILURES), `... and ${all.length - SHOWN_FAILURES} more`] : all;
}

describe.each(testDatabaseKinds())('the fuzzer on %s', (kind) => {
  let site: FuzzSite;
  beforeAll(async () => {
    site = await startFuzzSite(kind);
  });
  afterAll(() => site?.close());

  const under = (prefix: string) => site.routes.filter((route) => route.url.startsWith(prefix));

  it('reads every door from the route table', () => {
    const table = new Set(site.routes.map((route) => `${route.method} ${route.url}`));
    for (const route of [
      'GET /', 'POST /accounts/login/', 'POST /accounts/signup/', 'GET /accounts/password/reset/key/:key/', 'POST /accounts/login/code/confirm/',
      'POST /accounts/:provider/login/', 'POST /accounts/saml/:organization/acs/', 'GET /accounts/saml/:organization/metadata/', 'GET /accounts/2fa/webauthn/',
      'POST /_allauth/browser/v1/auth/login', 'POST /_allauth/app/v1/auth/login', 'POST /api/auth-token/', 'GET /api/users/me/', 'GET /admin/users/user/',
      'GET /users/:lookup/', 'GET /spa/*',
    ]) {
      expect(table, route).toContain(route);
    }
  });

  it('is signed in when it says so', async () => {
    const get = async (url: string, identity: Identity) => site.app.inject({ url, remoteAddress: nextAddress(), headers: { host: 'testserver', ...identity.headers, cookie: cookieHeader(identity, { url }) } });
    expect((await get('/accounts/email/', await site.userSession(0))).statusCode).toBe(200);
    expect((await get('/_allauth/app/v1/auth/session', await site.userSession(0))).statusCode).toBe(200);
    expect((await get('/api/users/me/', await site.userToken(0))).statusCode).toBe(200);
    expect((await get('/admin/users/user/', await site.staffSession(0))).statusCode).toBe(200);
    // The CSRF pair gets a form past the check, so the fuzzed bodies reach the handlers.
    const login = await site.app.inject({ method: 'POST', url: '/accounts/login/', remoteAddress: nextAddress(), headers: { host: 'testserver', 'x-csrftoken': CSRF_SECRET, cookie: `csrftoken=${CSRF_SECRET}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'login=nobody&password=wrong' });
    expect(login.statusCode).toBe(400);
    expect(login.body).toContain('The username and/or password you specified are not correct.');
  });

  it('answers every route, anonymously, without a 5xx, a hang or a leak', async () => {
    const cases = kind === 'sqlite' ? FUZZ_CASES : HANDLER_CASES;
    expect(report(await walk(site, site.routes, () => site.anonymous, cases), site)).toEqual([]);
  }, 60_000);

  it('answers every route signed in, by session, token and as staff, without a 5xx, a hang or a leak', async () => {
    // The admin's routes are walked by staff; the user is refused there (anonymously too), which the anonymous walk covers.
    const failures = [
      ...(await walk(site, site.routes.filter((route) => !route.url.startsWith(site.adminRoot)), (lane) => site.userSession(lane), HANDLER_CASES)),
      ...(await walk(site, under('/api/'), (lane) => site.userToken(lane), HANDLER_CASES)),
      ...(await walk(site, under(site.adminRoot), (lane) => site.staffSession(lane), HANDLER_CASES)),
    ];
    expect(report(failures, site)).toEqual([]);
  }, 60_000);

  it('refuses a 10 MB body at each door at once, with 413', async () => {
    // The first route that takes a body under each top-level path: the pages, the headless API, the token API, the admin.
    const doors = new Map<string, FuzzRoute>();
    for (const route of site.routes.filter(takesBody)) {
      const door = route.url.split('/')[1]!;
      if (!doors.has(door)) doors.set(door, route);
    }
    expect([...doors.keys()]).toEqual(expect.arrayContaining(['accounts', '_allauth', 'api', 'admin']));
    for (const route of doors.values()) {
      const url = pathWith(route.url, (name) => ordinaryParameter(name, KNOWN_PARAMETERS));
      const response = await withinDeadline(site.app.inject({ method: route.method, url, remoteAddress: nextAddress(), headers: { host: 'testserver', 'content-type': 'application/json' }, payload: HUGE_BODY }));
      expect(problemWith(response), `${route.method} ${url}`).toBeUndefined();
      expect(response !== 'too slow' && response.statusCode, `${route.method} ${url}`).toBe(413);
    }
    expect(report([], site)).toEqual([]);
  });
});
