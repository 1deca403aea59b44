import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestSmtpServer } from '@latchkey/core/testing/smtp';
import { afterAll } from 'vitest';
import { projectSettings } from '../../examples/site/src/config/settings.js';
import { freshRandomValues, renderProject, writeProject } from '../../packages/create-latchkey/src/generate.js';
import { optionsFrom, withDefaults } from '../../packages/create-latchkey/src/options.js';
import { createSitePostgresDatabase, type SiteDatabase, type SitePostgresDatabase } from './postgres.js';

// testing/index.ts exports the function but not its types; derive them rather than reach into the package.
export type TestSmtpServer = Awaited<ReturnType<typeof startTestSmtpServer>>;
export type TestSmtpServerOptions = NonNullable<Parameters<typeof startTestSmtpServer>[0]>;
export type ReceivedEmail = TestSmtpServer['messages'][number];
export type UsernameType = 'username' | 'email';

export interface StartSiteOptions {
  /**
   * Extra environment variables (`LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory'`, ...); they win
   * over the harness's. `{SITE_URL}` in a value stands for the site's URL, known only once its port
   * is chosen (e.g. HEADLESS_FRONTEND_URLS pointing at the site's own single-page app).
   */
  env?: Record<string, string>;
  /**
   * The project's USERNAME_TYPE. It is fixed in the settings file, not read from the environment,
   * so another value than the example site's runs a copy of the site with only that line changed:
   * what the generator writes for `--username-type email`.
   */
  usernameType?: UsernameType;
  /** Options for the SMTP server, e.g. `{ failWith: 451 }` to see what a person meets when mail fails. */
  smtp?: TestSmtpServerOptions;
  /**
   * Files of the project's own, by path, written over a fresh copy of the site (its
   * src/users/fields.ts and the migration adding their columns, say): what a project that
   * followed a page of the docs holds.
   */
  files?: Readonly<Record<string, string>>;
  /**
   * The name the site is visited by (and its SITE_URL's host): `127.0.0.1` by default, or
   * `localhost`, which WebAuthn needs (browsers refuse an IP address as a relying party id, and
   * accept localhost as a secure origin over plain http). The site listens on 127.0.0.1 either way.
   */
  hostname?: '127.0.0.1' | 'localhost';
  /** How long start-up (compile, migrate, listen) may take before the harness gives up; 50 s by default. */
  startTimeoutMs?: number;
  /**
   * Where the site keeps its data: a SQLite file (the default), or a PostgreSQL database of its
   * own on TEST_DATABASE_URL's server (harness/postgres.ts; siteDatabases() says whether there is one).
   */
  database?: SiteDatabase;
  /**
   * Run it as `npm start` does, in production mode (production settings, request logging to
   * stdout), after `manage migrate` as an operator's deploy step (production never migrates by
   * itself), with the variables production requires for a site on loopback.
   */
  production?: boolean;
}

export interface RunningSite {
  /** `http://127.0.0.1:PORT` (or `http://localhost:PORT`, see `hostname`), which is also the site's SITE_URL: links in its emails lead here. */
  url: string;
  /** The real SMTP server on loopback that receives the site's mail. */
  smtp: TestSmtpServer;
  /** Which database the site runs on. */
  database: SiteDatabase;
  /**
   * The LATCHKEY_SECRET_KEY it runs with: a test that changes what the site keeps in a session
   * (ageLogin) seals it as the site does, under this key and the session's id.
   */
  secretKey: string;
  /**
   * Runs the management CLI (`npm run manage -- ...args`) against the site's database, with the
   * site's environment plus `env`; rejects with its stderr when it exits non-zero. E.g.
   * `manage(['createsuperuser', '--username', 'ada', '--email', 'ada@example.com', '--noinput'], { LATCHKEY_SUPERUSER_PASSWORD: '...' })`.
   */
  manage(args: string[], env?: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
  /** What the server process has written so far, for a failing test to show. */
  output(): { stdout: string; stderr: string };
  /** SIGTERM, then waits for the process to exit; closes the SMTP server and removes the database (file, or PostgreSQL database). Safe to call twice. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
const exampleSite = join(repositoryRoot, 'examples', 'site');
const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;
/** The site's own grace period is 10 s (server.ts); past this, the harness stops waiting. */
const STOP_TIMEOUT_MS = 15_000;
const PORT_ATTEMPTS = 3;

/**
 * A safety net: every site a test file started and did not stop (a test that failed before its
 * own clean-up, or forgot it) is stopped after that file. Vitest evaluates this module once per
 * test file, during collection, so the hook belongs to the file that imports the harness.
 */
const runningSites = new Set<RunningSite>();
afterAll(async () => {
  await Promise.all([...runningSites].map((site) => site.stop()));
});

/**
 * Starts the example site as a separate process with `npm run dev` (local mode, or production
 * mode with `options.production`), on SQLite in a fresh directory or on a fresh PostgreSQL
 * database (`options.database`), sending its mail to a real SMTP server on loopback.
 *
 * The port is picked here rather than with PORT=0 because the site builds the links in its emails
 * from SITE_URL (never from the Host header), and SITE_URL must name the port the site listens on
 * for a test to follow those links. If another process takes the port in between, start-up is
 * retried on a fresh one.
 */
export async function startSite(options: StartSiteOptions = {}): Promise<RunningSite> {
  const smtp = await startTestSmtpServer(options.smtp);
  const directory = mkdtempSync(join(tmpdir(), 'lk-e2e-'));
  const database = options.database ?? 'sqlite';
  let postgres: SitePostgresDatabase | undefined;
  try {
    if (database === 'postgres') postgres = await createSitePostgresDatabase();
    const databaseUrl = postgres?.url ?? `sqlite:${join(directory, 'db.sqlite3')}`;
    const cwd = projectDirectory(options.usernameType ?? projectSettings.USERNAME_TYPE, directory, options.files ?? {});
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const url = `http://${options.hostname ?? '127.0.0.1'}:${port}`;
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_ENV: 'development',
        ...(options.production ? productionEnv(options.hostname ?? '127.0.0.1') : {}),
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        EMAIL_URL: smtp.url,
        LATCHKEY_SECRET_KEY: randomBytes(32).toString('base64url'),
        LATCHKEY_SITE_URL: url,
        ...Object.fromEntries(Object.entries(options.env ?? {}).map(([name, value]) => [name, value.replaceAll('{SITE_URL}', url)])),
      };
      if (options.production && attempt === 1) await runManage(cwd, env, ['migrate']);
      const started = await spawnSite(cwd, env, options.startTimeoutMs ?? 50_000);
      // The site logs the address it listens on; a test visits it by the name chosen above.
      if (started.ok) return handle({ ...started, url }, { smtp, directory, cwd, env, database, postgres });
      if (!started.addressInUse || attempt === PORT_ATTEMPTS) throw new Error(`The example site did not start:\n${started.stderr || started.stdout}`);
    }
  } catch (error) {
    await smtp.close();
    await postgres?.drop();
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

type SpawnResult =
  | { ok: true; url: string; child: ChildProcess; exited: Promise<ExitInfo>; stdout: () => string; stderr: () => string }
  | { ok: false; addressInUse: boolean; stdout: string; stderr: string };
type ExitInfo = { code: number | null; signal: NodeJS.Signals | null };

async function spawnSite(cwd: string, env: Record<string, string>, timeoutMs: number): Promise<SpawnResult> {
  // Its own process group, so that stop() can make sure that npm, tsx and node are all gone.
  const child = spawn('npm', ['run', 'dev', '--silent'], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const group = child.pid!;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<ExitInfo>((resolve) => {
    child.on('exit', (code, signal) => {
      // Whatever npm leaves behind (tsx, node) goes with it.
      killGroup(group, 'SIGKILL');
      resolve({ code, signal });
    });
  });

  let timer: NodeJS.Timeout | undefined;
  const outcome = await new Promise<{ url: string } | { exit: ExitInfo } | 'timeout'>((resolve) => {
    const onData = (): void => {
      const match = LISTENING.exec(stdout);
      if (!match) return;
      child.stdout.off('data', onData);
      resolve({ url: match[1]! });
    };
    child.stdout.on('data', onData);
    void exited.then((exit) => resolve({ exit }));
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  clearTimeout(timer);

  if (outcome !== 'timeout' && 'url' in outcome) {
    return { ok: true, url: outcome.url, child, exited, stdout: () => stdout, stderr: () => stderr };
  }
  if (outcome === 'timeout') {
    killGroup(group, 'SIGKILL');
    await exited;
    stderr += `\n(the harness gave up after ${timeoutMs / 1000} s without "Server listening at")`;
  }
  return { ok: false, addressInUse: /EADDRINUSE/.test(stdout + stderr), stdout, stderr };
}

interface SiteSetup {
  smtp: TestSmtpServer;
  directory: string;
  cwd: string;
  env: Record<string, string>;
  database: SiteDatabase;
  /** The site's PostgreSQL database, dropped once the site has exited. */
  postgres: SitePostgresDatabase | undefined;
}

function handle(started: Extract<SpawnResult, { ok: true }>, { smtp, directory, cwd, env, database, postgres }: SiteSetup): RunningSite {
  let stopping: Promise<ExitInfo> | undefined;
  const stop = async (): Promise<ExitInfo> => {
    started.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      started.exited,
      new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (exit === 'timeout') killGroup(started.child.pid!, 'SIGKILL');
    const result = await started.exited;
    await smtp.close();
    await postgres?.drop();
    rmSync(directory, { recursive: true, force: true });
    runningSites.delete(site);
    return result;
  };
  const site: RunningSite = {
    url: started.url,
    smtp,
    database,
    secretKey: env.LATCHKEY_SECRET_KEY!,
    manage: (args, extraEnv = {}) => runManage(cwd, { ...env, ...extraEnv }, args),
    output: () => ({ stdout: started.stdout(), stderr: started.stderr() }),
    stop: () => (stopping ??= stop()),
  };
  runningSites.add(site);
  return site;
}

/** What production requires (docs/production.md), for a site on loopback. */
function productionEnv(hostname: string): Record<string, string> {
  return { NODE_ENV: 'production', HOST: '127.0.0.1', LATCHKEY_ALLOWED_HOSTS: hostname, LATCHKEY_ADMIN_URL: 'staff-e2e/' };
}

function runManage(cwd: string, env: Record<string, string>, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile('npm', ['run', 'manage', '--silent', '--', ...args], { cwd, env }, (error, stdout, stderr) => {
      if (error) reject(new Error(`manage ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve({ stdout, stderr });
    });
  });
}

/**
 * The project to run `npm run dev` in: the example site for its own USERNAME_TYPE, else a project
 * the generator makes with the other one (and the example's other options), linked to the
 * repository's node_modules so that it runs the library from this working tree.
 */
function projectDirectory(usernameType: UsernameType, directory: string, files: Readonly<Record<string, string>>): string {
  if (usernameType === projectSettings.USERNAME_TYPE && Object.keys(files).length === 0) return exampleSite;
  const site = join(directory, 'site');
  const options = optionsFrom(withDefaults({ use_drf: 'y', username_type: usernameType }));
  writeProject(site, renderProject(options, freshRandomValues(), '^0.1.0'));
  for (const [path, content] of Object.entries(files)) writeFileSync(join(site, path), content);
  symlinkSync(join(repositoryRoot, 'node_modules'), join(site, 'node_modules'), 'dir');
  return site;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: every process of the group has already exited.
  }
}

/**
 * The first http(s) link in the message's text whose path starts with `pathPrefix`, e.g.
 * '/accounts/confirm-email/'. Fails naming the links it did find.
 */
export function linkFromEmail(message: Pick<ReceivedEmail, 'text' | 'subject'>, pathPrefix: string): string {
  // A sentence may end right after a link; its full stop is not part of the key.
  const links = (message.text.match(/https?:\/\/[^\s<>"')\]]+/g) ?? []).map((link) => link.replace(/[.,;:!?]+$/, ''));
  for (const link of links) {
    if (URL.canParse(link) && new URL(link).pathname.startsWith(pathPrefix)) return link;
  }
  throw new Error(`No link to ${pathPrefix} in the email "${message.subject}"; its links: ${links.length > 0 ? links.join(', ') : 'none'}.`);
}
