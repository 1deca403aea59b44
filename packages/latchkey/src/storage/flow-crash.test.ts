/**
 * `kill -9` in the middle of the account changes that span rows (issue 19, faults; security test
 * 44): a signup, a password change, an address added or made primary, an authenticator app
 * activated, an API token created, and a staff member's change to a user. After the restart every
 * change is either absent or complete, never in between (and a SQLite file passes its integrity
 * and foreign-key checks); a signup's confirmation mail, committed with it, is sent by the
 * restarted site.
 *
 * A child process (testing/flow-crash.child.ts) runs every change twice on each kind of
 * database, all at once, each run on a database of its own, and stops each run at a point
 * (testing/pause-gate.ts): after the first row it writes (inside its transaction: the change must
 * then be absent), or right after its first transaction commits (the change must then be
 * complete: nothing it needs may come in a later commit). Once all have stopped it is killed with SIGKILL, and the databases are opened again,
 * as the restarted site would, and read. SQLite always; PostgreSQL when TEST_DATABASE_URL is set.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountEvents } from '../account/events.js';
import type { PasswordHashing } from '../account/passwords/index.js';
import { ManualClock } from '../core/clock.js';
import { confirmEmail } from '../account/email-confirmation.js';
import { openLatchkey, passwordHashingFrom } from '../latchkey.js';
import { MemoryMailer } from '../mail/index.js';
import { CRASH_SCENARIOS, crashSettings, SIGNUP_EMAIL, type ChangeState, type CrashScenarioName } from '../testing/crash-scenarios.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase, type TestDatabaseKind } from '../testing/database.js';
import type { CrashRun } from '../testing/flow-crash.child.js';
import type { PauseOutcome, PausePoint } from '../testing/pause-gate.js';
import { openDatabase } from './database.js';

const TSX = fileURLToPath(new URL('../../../../node_modules/.bin/tsx', import.meta.url));
const CHILD = fileURLToPath(new URL('../testing/flow-crash.child.ts', import.meta.url));
const NAMES = Object.keys(CRASH_SCENARIOS) as CrashScenarioName[];
const POINTS: PausePoint[] = ['after-first-write', 'after-first-commit'];
/** Every run opens its own pool at once; on a busy machine PostgreSQL may take a while to accept them all. */
const PATIENT_CONNECT_MS = 20_000;

/** Runs the child until every change has stopped, kills it with SIGKILL, and says where each stopped. */
async function runAndKill(runs: CrashRun[]): Promise<PauseOutcome[]> {
  const child = spawn(TSX, [CHILD, JSON.stringify(runs)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  try {
    return await new Promise<PauseOutcome[]>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const line = stdout.split('\n').find((candidate) => candidate.startsWith('ready '));
        if (line !== undefined) resolve(JSON.parse(line.slice('ready '.length)) as PauseOutcome[]);
      });
      child.once('error', reject);
      void exited.then(() => reject(new Error(`the child exited before every change had stopped; stdout: ${stdout} stderr: ${stderr}`)));
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
  }
}

/** Opens the database again, as the restarted site would, checks the file (SQLite), and reads what the change left. */
async function observeAfterRestart(database: TestDatabase, name: CrashScenarioName, passwords: PasswordHashing): Promise<ChangeState> {
  const reopened = await openDatabase({ ...database.openOptions, connectTimeoutMs: PATIENT_CONNECT_MS });
  try {
    if (reopened.dialect === 'sqlite') {
      expect((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(reopened.kysely)).rows).toEqual([{ integrity_check: 'ok' }]);
      expect((await sql`pragma foreign_key_check`.execute(reopened.kysely)).rows).toEqual([]);
    }
    const clock = new ManualClock();
    return await CRASH_SCENARIOS[name].observe({ settings: crashSettings(), store: reopened.store, passwords, clock, events: new AccountEvents(reopened.store.auditLog, clock) });
  } finally {
    await reopened.close();
  }
}

/** What the rows must show for where the change stopped. */
function expected(outcome: PauseOutcome): ChangeState | 'before or after' {
  if (outcome === 'inside-transaction') return 'before';
  if (outcome === 'outside-transaction') return 'before or after';
  return 'after';
}

interface CrashResult {
  outcome: PauseOutcome;
  state: ChangeState;
}

const KINDS = testDatabaseKinds();
const databases: TestDatabase[] = [];
const results = new Map<string, CrashResult>();
const resultOf = (kind: TestDatabaseKind, point: PausePoint, name: CrashScenarioName): CrashResult => results.get(`${kind} ${point} ${name}`)!;
const databaseByRun = new Map<string, TestDatabase>();
const databaseOf = (kind: TestDatabaseKind, point: PausePoint, name: CrashScenarioName): TestDatabase => databaseByRun.get(`${kind} ${point} ${name}`)!;

// One child runs every change at both points on every database kind, each run on a database of
// its own: one process to start (most of the time this suite takes) and kill instead of many.
beforeAll(async () => {
  const runs = KINDS.flatMap((kind) => POINTS.flatMap((point) => NAMES.map((name) => ({ kind, point, name }))));
  // A few at a time: a dozen PostgreSQL connections asked for at once can time out on a busy machine.
  for (let start = 0; start < runs.length; start += 4) {
    databases.push(...(await Promise.all(runs.slice(start, start + 4).map(({ kind }) => createTestDatabase(kind, 'username', { sqliteFile: true })))));
  }
  // Only the child has the databases open while it runs, as only the site would.
  await Promise.all(databases.map((database) => database.close()));
  const outcomes = await runAndKill(runs.map(({ name, point }, index) => ({ name, point, database: { ...databases[index]!.openOptions, connectTimeoutMs: PATIENT_CONNECT_MS } })));
  const passwords = passwordHashingFrom(crashSettings());
  try {
    await Promise.all(
      runs.map(async ({ kind, point, name }, index) => {
        databaseByRun.set(`${kind} ${point} ${name}`, databases[index]!);
        results.set(`${kind} ${point} ${name}`, { outcome: outcomes[index]!, state: await observeAfterRestart(databases[index]!, name, passwords) });
      }),
    );
  } finally {
    await passwords.close();
  }
  // All of the suite's work is here: on an idle machine well under a minute, on a busy one more.
}, 150_000);

afterAll(async () => {
  await Promise.all(databases.map((database) => database.destroy()));
});

describe.each(KINDS)('kill -9 during account changes, on %s', (kind) => {
  it('leaves no trace of a change killed after its first write', () => {
    for (const name of NAMES) {
      const { outcome, state } = resultOf(kind, 'after-first-write', name);
      // Every change was stopped mid-way: none had finished.
      expect(outcome, name).not.toBe('completed');
      const wanted = expected(outcome);
      if (wanted === 'before or after') expect(['before', 'after'], `${name}: ${state}`).toContain(state);
      else expect(state, `${name}, stopped ${outcome}`).toBe(wanted);
    }
    // The changes written in one transaction of the store were caught inside it.
    expect(NAMES.filter((name) => resultOf(kind, 'after-first-write', name).outcome === 'inside-transaction')).toEqual(NAMES.filter((name) => name !== 'token creation'));
  });

  it('keeps a change whole when killed right after its commit', () => {
    for (const name of NAMES) {
      const { outcome, state } = resultOf(kind, 'after-first-commit', name);
      expect(state, `${name}, stopped ${outcome}`).toBe(expected(outcome));
    }
  });

  it('sends the confirmation mail of a signup killed right after its commit once the site is back, and its link confirms the address', async () => {
    const database = databaseOf(kind, 'after-first-commit', 'signup');
    const settings = crashSettings();
    const mailer = new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL });
    // Minutes after the crash: the start-up sweep takes the mail nobody sent.
    const clock = new ManualClock(new Date(new ManualClock().now().getTime() + 6 * 60_000));
    const site = await openLatchkey({ settings, clock, mailer, database: await openDatabase(database.openOptions), migrations: 'require' });
    try {
      await site.deps.background.idle();
      expect(mailer.outbox.map((mail) => mail.to)).toEqual([[SIGNUP_EMAIL]]);
      expect(await site.deps.store.mailOutbox.list()).toEqual([]);
      const key = /\/accounts\/confirm-email\/([^/\s]+)\//.exec(mailer.outbox[0]!.text)?.[1];
      expect(await confirmEmail(site.deps, key, { ip: '203.0.113.7', userAgent: 'vitest' })).toMatchObject({ email: SIGNUP_EMAIL, verified: true });
    } finally {
      await site.close();
    }
  });
});
