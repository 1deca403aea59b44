/**
 * The server half of bench/api.ts, run in its own process so that autocannon's CPU use (in the
 * parent) is not counted against the server. It is the example site as `npm start` builds it
 * (buildApp, the project's settings and adapter), configured by the environment the parent passes
 * (NODE_ENV=production, DATABASE_URL, ...), plus one bare route on the same Fastify instance.
 *
 * It creates the benchmark's user (verified email, production's argon2 hash), issues their API
 * token, listens on an ephemeral port of 127.0.0.1 and tells the parent over IPC. On request it
 * measures the raw password-hashing rate with the same service logins use, and it stops on `stop`.
 */
import { buildApp, TEMPLATE_DIRS } from '../examples/site/src/app.js';
import { projectSettings } from '../examples/site/src/config/settings.js';
import { AccountAdapter } from '../examples/site/src/users/adapters.js';
// The site runs the library as a project installs it (its build), so this file does too.
import { createLatchkey, loadSettings, type Latchkey } from '@latchkey/core';
import { passwordHashingFrom } from '../packages/latchkey/src/latchkey.js';

const BENCH_LOGIN = 'bench';
const BENCH_PASSWORD = 'correct horse battery staple';
/** Answers the same JSON as GET /api/users/me/ for the benchmark's user, with no authentication at all. */
const BARE_ROUTE = '/bench/bare/';

// The parent imports only these types: importing anything else would start a server in it.
/** What the parent asks. */
export type ParentMessage = { type: 'measure-hashing'; callers: number; durationMs: number } | { type: 'cpu' } | { type: 'stop' };

/** What the child answers. */
export type ChildMessage =
  | {
      type: 'ready';
      port: number;
      bareRoute: string;
      login: string;
      password: string;
      token: string;
      sessionCookie: string;
      argon2: string;
      hashingConcurrency: number;
    }
  /** `verifications` finished within `seconds`; `cpuSeconds` were spent on `all` of them, the ones the window cut included. */
  | { type: 'hashing'; verifications: number; seconds: number; all: number; cpuSeconds: number }
  /** process.cpuUsage() of the server: every thread's, argon2's and the database driver's included. */
  | { type: 'cpu'; microseconds: number }
  | { type: 'failed'; message: string };

function send(message: ChildMessage): void {
  process.send?.(message);
}

/**
 * Verifications per second with `callers` callers each awaiting one verify() after another, on
 * the service the login uses (PASSWORD_HASHING_CONCURRENCY bounds how many run at once, exactly
 * as for logins). The rate counts from the start to the last verification finished inside the
 * window; the CPU time is the whole process's (argon2 computes on libuv's threads) until the last
 * caller is done, so it goes with every verification, those that ran past the window included.
 */
async function measureHashing(latchkey: Latchkey, encoded: string, callers: number, durationMs: number): Promise<ChildMessage> {
  // A hashing service built from the same settings as the login's (same workers, same bound).
  const passwords = passwordHashingFrom(latchkey.settings);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  let verifications = 0;
  let all = 0;
  let lastFinished = started;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < deadline) {
        const { valid } = await passwords.verify(BENCH_PASSWORD, encoded);
        if (!valid) throw new Error("The benchmark user's password did not verify.");
        all += 1;
        const finished = performance.now();
        if (finished <= deadline) {
          verifications += 1;
          lastFinished = finished;
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  await passwords.close();
  return { type: 'hashing', verifications, seconds: (lastFinished - started) / 1000, all, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

async function start(): Promise<void> {
  const settings = loadSettings(projectSettings);
  // 'auto': the parent hands over an empty database; a production server would `manage migrate` first.
  const latchkey = await createLatchkey({ settings, adapter: new AccountAdapter(settings), templateDirs: TEMPLATE_DIRS, migrations: 'auto' });
  const app = await buildApp(latchkey);
  let barePayload: unknown = {};
  app.get(BARE_ROUTE, (_request, reply) => reply.send(barePayload));

  const user = await latchkey.users.create({ username: BENCH_LOGIN, email: 'bench@example.com', password: BENCH_PASSWORD, name: 'Bench User', emailVerified: true });
  const token = await latchkey.apiTokens.issue(user);
  const encoded = user.password ?? '';

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('The server has no TCP port.');
  // The bare route answers exactly what /api/users/me/ answers for this user.
  const me = await app.inject({ method: 'GET', url: '/api/users/me/', headers: { host: '127.0.0.1', authorization: `Token ${token}` } });
  if (me.statusCode !== 200) throw new Error(`GET /api/users/me/ with the token answered ${me.statusCode}: ${me.body.slice(0, 200)}`);
  barePayload = me.json();

  // A parent that dies (Ctrl-C) takes the server with it.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'measure-hashing') {
      measureHashing(latchkey, encoded, message.callers, message.durationMs).then(send, (error: unknown) => send({ type: 'failed', message: String(error) }));
    } else if (message.type === 'cpu') {
      const { user: userTime, system } = process.cpuUsage();
      send({ type: 'cpu', microseconds: userTime + system });
    } else {
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    }
  });
  send({
    type: 'ready',
    port: address.port,
    bareRoute: BARE_ROUTE,
    login: BENCH_LOGIN,
    password: BENCH_PASSWORD,
    token,
    sessionCookie: settings.SESSION_COOKIE_NAME,
    argon2: `argon2id m=${settings.ARGON2_MEMORY_COST} KiB, t=${settings.ARGON2_TIME_COST}, p=${settings.ARGON2_PARALLELISM}`,
    hashingConcurrency: settings.PASSWORD_HASHING_CONCURRENCY,
  });
}

start().catch((error: unknown) => {
  send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
