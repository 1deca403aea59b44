/**
 * The child process of storage/flow-crash.test.ts. For each run asked for on the command line (a
 * scenario of testing/crash-scenarios.ts, a point to stop at, a database of its own), it sets up
 * the account, then runs the flow until the PauseGate stops it; once every flow has stopped (or
 * finished), it writes `ready ["<where each stopped>", ...]` on stdout, in the order asked, and
 * waits, with every change left as it stood, to be killed. Should the parent go away instead
 * (stdin closes), it leaves without finishing anything.
 */
import { ManualClock } from '../core/clock.js';
import { openLatchkey } from '../latchkey.js';
import { MemoryMailer } from '../mail/index.js';
import { openDatabase, type OpenDatabaseOptions } from '../storage/database.js';
import { createKyselyStore } from '../storage/kysely/store.js';
import { CRASH_SCENARIOS, crashSettings, type CrashScenarioName } from './crash-scenarios.js';
import { PauseGate, type PauseOutcome, type PausePoint } from './pause-gate.js';

export interface CrashRun {
  name: CrashScenarioName;
  point: PausePoint;
  database: OpenDatabaseOptions;
}

async function runUntilStopped({ name, point, database: options }: CrashRun): Promise<PauseOutcome> {
  const database = await openDatabase(options);
  const gate = new PauseGate(point);
  // Only the store goes through the gate: the rate-limit counters and one-time claims, which
  // the flows also write, are not the change under test.
  const store = gate.wrap(createKyselyStore(database.kysely.withPlugin(gate.plugin), database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields }));
  const settings = crashSettings();
  const latchkey = await openLatchkey({
    settings,
    clock: new ManualClock(),
    mailer: new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL }),
    database: { ...database, store },
    migrations: 'require',
    // No periodic sweep of the mail outbox: its writes would pass the gate instead of the flow's.
    mailOutbox: { sweepIntervalMs: 24 * 3600 * 1000 },
  });
  const change = await CRASH_SCENARIOS[name].setUp(latchkey.deps);
  // Whatever start-up left running (the mail outbox's first sweep) ends before the gate opens.
  await latchkey.deps.background.idle();
  gate.arm();
  return Promise.race([change().then((): PauseOutcome => 'completed'), gate.reached]);
}

async function main(runs: CrashRun[]): Promise<void> {
  const outcomes = await Promise.all(runs.map(runUntilStopped));
  process.stdout.write(`ready ${JSON.stringify(outcomes)}\n`);
  await new Promise<never>(() => {
    process.stdin.on('end', () => process.exit(3));
    process.stdin.resume();
  });
}

const [argument] = process.argv.slice(2);
if (argument === undefined) {
  process.stderr.write('usage: flow-crash.child.ts \'[{"name": ..., "point": ..., "database": {...}}, ...]\'\n');
  process.exit(2);
}
main(JSON.parse(argument) as CrashRun[]).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
