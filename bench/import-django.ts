/**
 * `manage import-django` at scale (issue 21: "handles 1,000,000 users in minutes"): a
 * cookiecutter-django project's database of 1,000,000 users imported into a new Latchkey
 * database, on SQLite, then on PostgreSQL, and a `manage.py dumpdata` file of 100,000 users. The
 * goals: under 5 minutes for 1,000,000 users on each database, and a peak RSS under 1.5 GB.
 *
 * The parts, in import-django/: the Django database (django-rows.ts, what it holds;
 * django-database.ts, making it on SQLite or PostgreSQL, and its dumpdata file), the import in a
 * child process of its own (import-child.ts; import-meter.ts times where it goes), and what is
 * printed (report.ts). Here: each database's run and the goals. A second run on the same
 * databases must find everything there and write nothing. After the first run
 * `verifyDjangoImport` compares 200 random users and their rows with the source.
 *
 * `--users N` (or BENCH_IMPORT_DJANGO_USERS) imports N users instead of 1,000,000, for a quick
 * try; the dumpdata file has min(N, 100,000). BENCH_CPU_PROFILE_DIR=<dir> makes each import child
 * write a V8 CPU profile there. Every database, file and directory made is removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { openDatabase } from '../packages/latchkey/src/storage/database.js';
import { djangoFixtureUnavailable } from '../packages/latchkey/src/testing/django-fixture.js';
import { recordGoal } from './goals.js';
import { onEachDatabase, sqliteDatabase, type BenchDatabase } from './harness.js';
import { dumpdata, DUMPDATA_LABELS, makeDjangoDatabase, type DjangoDatabase } from './import-django/django-database.js';
import { MFA_EVERY } from './import-django/django-rows.js';
import { count, duration, gigabytes, load, MiB, seconds, secondsSince } from './import-django/figures.js';
import { BATCH_SIZE, importInChild, type ImportResult } from './import-django/import-child.js';
import { checkCounts, printKinds, printRun, printSetup } from './import-django/report.js';

const DEFAULT_USERS = 1_000_000;
const DUMPDATA_USERS = 100_000;
const GOAL_MINUTES = 5;
const GOAL_RSS_GB = 1.5;
const VERIFY_SAMPLE = 200;

function usersOption(): number {
  const index = process.argv.indexOf('--users');
  const given = index >= 0 ? process.argv[index + 1] : (process.argv.find((argument) => argument.startsWith('--users='))?.slice('--users='.length) ?? process.env.BENCH_IMPORT_DJANGO_USERS);
  if (given === undefined || given === '') return DEFAULT_USERS;
  const users = Number(given.replaceAll('_', ''));
  if (!Number.isInteger(users) || users < MFA_EVERY) throw new Error(`--users must be a whole number, at least ${MFA_EVERY}; got ${given}.`);
  return users;
}

async function migrate(target: BenchDatabase): Promise<void> {
  const database = await openDatabase({ url: target.url, usernameType: 'username' });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
}

/** The first import and the second on `target`, from `source`; prints them and answers both. */
async function importTwice(source: string, target: BenchDatabase, label: string): Promise<{ first: ImportResult; second: ImportResult }> {
  await migrate(target);
  const secretKey = randomBytes(48).toString('base64url');
  console.log(`import into ${target.label}, load ${load()}`);
  const first = await importInChild({ source, targetUrl: target.url, secretKey, label: `${label}, first run`, verifySample: VERIFY_SAMPLE });
  printRun('first run', first);
  printKinds(first);
  if (first.verify) {
    const { verify } = first;
    console.log(`reverse check (import-django --verify, ${VERIFY_SAMPLE} users): ${verify.usersChecked} users and ${count(verify.rowsChecked)} rows checked in ${seconds(verify.seconds)} s, ${verify.differences} difference(s)`);
  }
  // The same secret key: the tokens' keyed hashes must come out the same for them to be found there.
  const second = await importInChild({ source, targetUrl: target.url, secretKey, label: `${label}, second run`, verifySample: 0 });
  printRun('second run', second);
  printKinds(second);
  return { first, second };
}


/** The Django database of `users` users on `target`'s kind of database, imported into `target` (onEachDatabase drops it). */
async function benchmarkOn(target: BenchDatabase, users: number): Promise<void> {
  const name = target.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  console.log(`\n### ${name}\n`);
  let django: DjangoDatabase | undefined;
  try {
    const started = performance.now();
    django = await makeDjangoDatabase(target.kind, users);
    printSetup(django, users, started);
    const { first, second } = await importTwice(django.fixture.databaseUrl, target, name);
    const problems = checkCounts(users, first, second);
    for (const problem of problems) console.log(`WRONG: ${problem}`);
    recordGoal({
      measure: `import-django, ${count(users)} users, ${name}`,
      today: duration(first.seconds),
      goal: `< ${GOAL_MINUTES} min`,
      met: first.seconds < GOAL_MINUTES * 60 && problems.length === 0,
    });
    const peak = Math.max(first.maxRssBytes, second.maxRssBytes);
    recordGoal({ measure: `import-django peak RSS, ${count(users)} users, ${name}`, today: gigabytes(peak), goal: `< ${GOAL_RSS_GB} GB`, met: peak < GOAL_RSS_GB * 1024 ** 3 });
  } finally {
    await django?.fixture.cleanup();
  }
}
/** A dumpdata file of `users` users (made by Django's own dumpdata), imported into SQLite. */
async function benchmarkDumpdata(users: number): Promise<void> {
  const target = await sqliteDatabase();
  let django: DjangoDatabase | undefined;
  try {
    const started = performance.now();
    django = await makeDjangoDatabase('sqlite', users);
    printSetup(django, users, started);
    // In the fixture's directory, which its cleanup removes.
    const file = join(dirname(django.fixture.dumpdataPath), 'bench-dumpdata.json');
    const dumped = performance.now();
    await dumpdata(django.fixture.databaseUrl, file);
    console.log(`python manage.py dumpdata ${DUMPDATA_LABELS.join(' ')} --natural-foreign --indent 2: ${((await stat(file)).size / MiB).toFixed(0)} MiB in ${seconds(secondsSince(dumped))} s; not measured`);
    const { first, second } = await importTwice(file, target, 'dumpdata');
    for (const problem of checkCounts(users, first, second)) console.log(`WRONG: ${problem}`);
  } finally {
    await django?.fixture.cleanup();
    await target.drop();
  }
}

export async function benchmarkImportDjango(): Promise<void> {
  const users = usersOption();
  const unavailable = djangoFixtureUnavailable();
  if (unavailable !== null) {
    console.log(`Skipped: ${unavailable}.`);
    return;
  }
  console.log(`${availableParallelism()} CPUs; Node ${process.version}; load average ${load()}; batches of ${count(BATCH_SIZE)} rows, as the command's default`);
  await onEachDatabase((target) => benchmarkOn(target, users));
  console.log('\n### A dumpdata file, into SQLite\n');
  await benchmarkDumpdata(Math.min(users, DUMPDATA_USERS));
}
