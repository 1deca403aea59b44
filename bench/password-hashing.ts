/**
 * Password hashing under load, exactly as production is configured by default: Django's argon2
 * parameters (m=102400 KiB, t=2, p=8) and the default PASSWORD_HASHING_CONCURRENCY:
 *
 * - throughput: verifications per second with 1, 2 and 8 callers waiting on verify() at once;
 * - memory: peak RSS while a burst of 500 verifications is queued, against the RSS before it.
 *   The bound, not the burst, sets the peak: at most `concurrency` hashes hold their 100 MiB.
 *
 * Each phase runs for a fixed window so the whole benchmark stays well under a minute. The burst
 * is not drained (500 argon2 hashes take minutes on a small machine); after its window the
 * service is closed, which refuses the hashes still waiting, exactly what a shutdown does.
 */
import type { PasswordHashing } from '../packages/latchkey/src/account/passwords/index.js';
import { loadSettings, passwordHashingFrom, type Settings } from '../packages/latchkey/src/index.js';

const THROUGHPUT_WINDOW_MS = 3_000;
const BURST_WINDOW_MS = 8_000;
const BURST_SIZE = 500;
const RSS_SAMPLE_INTERVAL_MS = 20;
const MiB = 1024 * 1024;

/** The settings a production deployment gets when it changes nothing about hashing. */
function productionSettings(): Settings {
  return loadSettings(
    { USERNAME_TYPE: 'username', SITE_NAME: 'Bench', DOMAIN_NAME: 'bench.example' },
    {
      env: {
        NODE_ENV: 'production',
        LATCHKEY_SECRET_KEY: 'bench-only-secret-key-bench-only-secret-key-bench-only',
        DATABASE_URL: 'sqlite::memory:',
        EMAIL_URL: 'console:',
        LATCHKEY_ADMIN_URL: 'staff/',
      },
    },
  );
}

function createService(): PasswordHashing {
  return passwordHashingFrom(productionSettings());
}

/** Verifications per second with `callers` callers each awaiting one verify() after another. */
async function measureThroughput(service: PasswordHashing, encoded: string, callers: number): Promise<number> {
  const started = performance.now();
  const deadline = started + THROUGHPUT_WINDOW_MS;
  let completed = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < deadline) {
        const { valid } = await service.verify('correct horse battery staple', encoded);
        if (!valid) throw new Error('The benchmark hash did not verify.');
        completed += 1;
      }
    }),
  );
  return completed / ((performance.now() - started) / 1000);
}

interface BurstResult {
  rssBefore: number;
  rssPeak: number;
  completed: number;
  peakInFlight: number;
}

/** Queues BURST_SIZE verifications at once and samples RSS until the window ends. */
async function measureBurst(encoded: string): Promise<BurstResult> {
  const service = createService();
  // A first hash starts libuv's threads and argon2's allocator, so "before" is a warm baseline.
  await service.verify('warm up', encoded);
  const rssBefore = process.memoryUsage.rss();
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  }, RSS_SAMPLE_INTERVAL_MS);

  let completed = 0;
  const burst = Array.from({ length: BURST_SIZE }, () =>
    service.verify('correct horse battery staple', encoded).then(
      () => (completed += 1),
      () => undefined, // refused by close() below: still waiting when the window ended
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, BURST_WINDOW_MS));
  const { peakInFlight } = service.stats();
  await service.close();
  await Promise.all(burst);
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  return { rssBefore, rssPeak, completed, peakInFlight };
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
}

export async function benchmarkPasswordHashing(): Promise<void> {
  const settings = productionSettings();
  console.log(
    `argon2id m=${settings.ARGON2_MEMORY_COST} t=${settings.ARGON2_TIME_COST} p=${settings.ARGON2_PARALLELISM}; ` +
      `concurrency ${settings.PASSWORD_HASHING_CONCURRENCY} (PASSWORD_HASHING_CONCURRENCY default); ` +
      `libuv thread pool ${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`,
  );

  const service = createService();
  const encoded = await service.hash('correct horse battery staple');
  const throughput: string[][] = [['verifications in flight', 'hashes/s', 'ms/hash per caller']];
  for (const callers of [1, 2, 8]) {
    const rate = await measureThroughput(service, encoded, callers);
    throughput.push([String(callers), rate.toFixed(2), ((1000 * callers) / rate).toFixed(0)]);
  }
  await service.close();
  printTable(throughput);

  const burst = await measureBurst(encoded);
  console.log('');
  printTable([
    ['burst', 'RSS before', 'peak RSS', 'peak - before', 'peak in flight', `completed in ${BURST_WINDOW_MS / 1000} s`],
    [
      `${BURST_SIZE} verifications`,
      `${(burst.rssBefore / MiB).toFixed(0)} MiB`,
      `${(burst.rssPeak / MiB).toFixed(0)} MiB`,
      `${((burst.rssPeak - burst.rssBefore) / MiB).toFixed(0)} MiB`,
      String(burst.peakInFlight),
      String(burst.completed),
    ],
  ]);
}
