/**
 * The timed import, in a child process of its own (this file, forked), so that its peak RSS
 * (getrusage's maxrss) is the import's alone, not the parent's, which made the rows. The target is
 * a new Latchkey database (a SQLite file; a new PostgreSQL database), migrated by the library;
 * the import is `importDjangoAccounts` exactly as `manage import-django <url>` calls it
 * (createLatchkey with the example site's settings in production mode, openDjangoDatabase,
 * createKyselyImportTarget, the command's batch size of 1,000). It is timed from opening the
 * source to the commit, and where the time goes is measured by import-meter.ts. After a first
 * run, `verifyDjangoImport` compares a sample of random users and their rows with the source.
 * BENCH_CPU_PROFILE_DIR=<dir> makes each import child write a V8 CPU profile there.
 */
import { openLatchkey } from '../../packages/latchkey/src/latchkey.js';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { projectSettings } from '../../examples/site/src/config/settings.js';
import { importDjangoAccounts } from '../../packages/latchkey/src/django-import/flows/import-accounts.js';
import { verifyDjangoImport } from '../../packages/latchkey/src/django-import/flows/verify-import.js';
import { DJANGO_KINDS, DJANGO_TABLES, type DjangoKind } from '../../packages/latchkey/src/django-import/model.js';
import type { DjangoSource } from '../../packages/latchkey/src/django-import/ports.js';
import { loadSettings } from '../../packages/latchkey/src/index.js';
import { openDjangoDatabase } from '../../packages/latchkey/src/storage/django/database-source.js';
import { openDjangoDumpdata } from '../../packages/latchkey/src/storage/django/dumpdata-source.js';
import { createKyselyImportTarget } from '../../packages/latchkey/src/storage/kysely/django-import-target.js';
import { profilingArguments } from '../harness.js';
import { count, load, secondsSince } from './figures.js';
import { Meter, StatementTimer, timedSource, type KindTimes } from './import-meter.js';

/** What `manage import-django` reads and writes at a time unless told otherwise (--batch-size). */
export const BATCH_SIZE = 1000;
const PROGRESS_EVERY_MS = 30_000;
const IMPORT_TIMEOUT_MS = 60 * 60_000;
/** The environment variable that makes this file, forked, the import child. */
const CHILD_JOB = 'LATCHKEY_BENCH_IMPORT_DJANGO_JOB';

export interface ImportJob {
  /** A database URL, or a dumpdata file's path. */
  source: string;
  targetUrl: string;
  secretKey: string;
  label: string;
  verifySample: number;
}

export interface KindFigures extends KindTimes {
  read: number;
  inserted: number;
  present: number;
  skipped: number;
}

export interface ImportResult {
  type: 'done';
  /** From opening the source to the commit. */
  seconds: number;
  /** Opening the source (for a dump: reading and parsing the whole file). */
  openSeconds: number;
  /** After the last kind: moving PostgreSQL's sequences and the commit. */
  commitSeconds: number;
  kinds: Record<DjangoKind, KindFigures>;
  skipped: string[];
  cpuSeconds: number;
  maxRssBytes: number;
  verify?: { seconds: number; usersChecked: number; rowsChecked: number; differences: number };
}

type ChildAnswer = ImportResult | { type: 'failed'; message: string };

/** The settings the example site runs with in production, on the benchmark's databases. */
function siteSettings(job: ImportJob) {
  return loadSettings(projectSettings, {
    env: {
      NODE_ENV: 'production',
      LATCHKEY_SECRET_KEY: job.secretKey,
      LATCHKEY_ALLOWED_HOSTS: '127.0.0.1',
      LATCHKEY_ADMIN_URL: 'staff/',
      DATABASE_URL: job.targetUrl,
      EMAIL_URL: 'console:',
    },
  });
}

function openSource(location: string): Promise<DjangoSource> {
  return /^(postgres|postgresql|sqlite):/.test(location) ? openDjangoDatabase(location) : openDjangoDumpdata(location);
}

async function runImportJob(job: ImportJob): Promise<ImportResult> {
  // As `manage import-django` starts Latchkey (withLatchkey): the migrations must be there already.
  const latchkey = await openLatchkey({ settings: siteSettings(job), migrations: 'require' });
  try {
    const meter = new Meter();
    const { database } = latchkey;
    const target = createKyselyImportTarget(database.kysely.withPlugin(new StatementTimer(meter)), database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields });
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const source = await openSource(job.source);
    const openSeconds = secondsSince(started);
    try {
      let lastPrinted = performance.now();
      const report = await importDjangoAccounts(latchkey.deps, timedSource(source, meter), target, {
        dryRun: false,
        batchSize: BATCH_SIZE,
        onProgress: ({ kind, done, total }) => {
          if (performance.now() - lastPrinted < PROGRESS_EVERY_MS) return;
          lastPrinted = performance.now();
          console.log(`  ${job.label}: ${DJANGO_TABLES[kind]} ${count(done)} of ${count(total)} after ${secondsSince(started).toFixed(0)} s (load ${load()})`);
        },
      });
      const finished = performance.now();
      const seconds = (finished - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const kinds = Object.fromEntries(DJANGO_KINDS.map((kind) => [kind, { ...meter.times[kind], ...report.counts[kind] }])) as Record<DjangoKind, KindFigures>;
      const result: ImportResult = {
        type: 'done',
        seconds,
        openSeconds,
        commitSeconds: (finished - meter.lastLeft) / 1000,
        kinds,
        skipped: report.skipped.slice(0, 5).map((row) => `${DJANGO_TABLES[row.kind]} ${row.id}: ${row.reason}`),
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        maxRssBytes: 0,
      };
      if (report.skipped.length > 5) result.skipped.push(`... and ${report.skipped.length - 5} more`);
      if (job.verifySample > 0) {
        const verifyStarted = performance.now();
        const verified = await verifyDjangoImport(latchkey.deps, source, { sample: job.verifySample });
        result.verify = { seconds: secondsSince(verifyStarted), usersChecked: verified.usersChecked, rowsChecked: verified.rowsChecked, differences: verified.differences.length };
      }
      // getrusage's ru_maxrss, in KiB on Linux: the process's high-water mark.
      result.maxRssBytes = process.resourceUsage().maxRSS * 1024;
      return result;
    } finally {
      await source.close();
    }
  } finally {
    await latchkey.close();
  }
}

/** Runs one import in a new process (this file, forked), and answers what it measured. */
export function importInChild(job: ImportJob): Promise<ImportResult> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', import.meta.resolve('tsx'), ...profilingArguments()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [CHILD_JOB]: JSON.stringify(job) },
  });
  return new Promise((resolve, reject) => {
    let answer: ChildAnswer | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), IMPORT_TIMEOUT_MS);
    child.on('message', (message: ChildAnswer) => {
      answer = message;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (answer?.type === 'done') resolve(answer);
      else reject(new Error(answer?.type === 'failed' ? `The import failed: ${answer.message}` : `The import process exited (code ${code ?? 'none'}, signal ${signal ?? 'none'}).`));
    });
  });
}

// Forked by importInChild: this process is the import.
const job = process.env[CHILD_JOB];
if (job !== undefined && process.send !== undefined) {
  const send = (answer: ChildAnswer) => process.send!(answer, () => process.exit(0));
  runImportJob(JSON.parse(job) as ImportJob).then(send, (error: unknown) => send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }));
}
