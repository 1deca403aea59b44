/**
 * Password hashing under load with production's settings: Django's argon2 parameters
 * (m=102400 KiB, t=2, p=8) and the other defaults.
 *
 * - throughput: verifications per second with exactly 1, 2 and 8 hashes in flight. Each row gets
 *   its own service with PASSWORD_HASHING_CONCURRENCY set to that number and as many callers;
 *   sampling stats() shows what was really in flight. Every other setting is production's default.
 * - memory: peak RSS while a burst of 500 verifications is queued, against the RSS before it, with
 *   every setting at production's default (PASSWORD_HASHING_CONCURRENCY and
 *   PASSWORD_HASHING_QUEUE_LIMIT included). The bound, not the burst, sets the peak: at most
 *   `concurrency` hashes hold their 100 MiB.
 *
 * Each phase runs for a fixed window so the whole benchmark stays well under a minute. The burst
 * is not drained (500 argon2 hashes take minutes on a small machine); after its window the
 * service is closed, which refuses the hashes still waiting, exactly what a shutdown does.
 */
import { availableParallelism } from 'node:os';
import type { PasswordHashing } from '../packages/latchkey/src/account/passwords/index.js';
import { loadSettings, type Settings } from '../packages/latchkey/src/index.js';
import { passwordHashingFrom } from '../packages/latchkey/src/latchkey.js';

const THROUGHPUT_WINDOW_MS = 3_000;
const IN_FLIGHT = [1, 2, 8];
const BURST_WINDOW_MS = 8_000;
const BURST_SIZE = 500;
const SAMPLE_INTERVAL_MS = 20;
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

interface ThroughputResult {
  /** Verifications per second. */
  rate: number;
  /** Milliseconds one verification takes while the others run. */
  msPerHash: number;
  /** The mean of stats().inFlight sampled during the window. */
  meanInFlight: number;
  peakInFlight: number;
}

/**
 * Verifications per second with `inFlight` hashes running at once: a service whose concurrency
 * is `inFlight` (production's settings otherwise) and `inFlight` callers that each await one
 * verify() after another. A caller's next call takes its slot in the same step as its answer
 * arrives, so the slots never stand idle. The rate is `inFlight` divided by the mean time of a
 * call, which unlike counting answers in the window does not depend on where the window cuts
 * the hashes that started together.
 */
async function measureThroughput(encoded: string, inFlight: number): Promise<ThroughputResult> {
  const service = passwordHashingFrom({ ...productionSettings(), PASSWORD_HASHING_CONCURRENCY: inFlight });
  try {
    // Warm up: start the slots' threads and argon2's allocator before the clock starts.
    await Promise.all(Array.from({ length: inFlight }, () => service.verify('warm up', encoded)));
    const samples: number[] = [];
    const sampler = setInterval(() => samples.push(service.stats().inFlight), SAMPLE_INTERVAL_MS);
    const stopSampling = setTimeout(() => clearInterval(sampler), THROUGHPUT_WINDOW_MS);
    const deadline = performance.now() + THROUGHPUT_WINDOW_MS;
    const durations: number[] = [];
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() < deadline) {
          const started = performance.now();
          const { valid } = await service.verify('correct horse battery staple', encoded);
          if (!valid) throw new Error('The benchmark hash did not verify.');
          durations.push(performance.now() - started);
        }
      }),
    );
    clearTimeout(stopSampling);
    clearInterval(sampler);
    const msPerHash = durations.reduce((sum, duration) => sum + duration, 0) / durations.length;
    const meanInFlight = samples.reduce((sum, sample) => sum + sample, 0) / Math.max(samples.length, 1);
    return { rate: (1000 * inFlight) / msPerHash, msPerHash, meanInFlight, peakInFlight: service.stats().peakInFlight };
  } finally {
    await service.close();
  }
}

interface BurstResult {
  rssBefore: number;
  rssPeak: number;
  completed: number;
  peakInFlight: number;
  /** Refused at once with server_busy: more than PASSWORD_HASHING_QUEUE_LIMIT were waiting. */
  busy: number;
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
  }, SAMPLE_INTERVAL_MS);

  let completed = 0;
  const burst = Array.from({ length: BURST_SIZE }, () =>
    service.verify('correct horse battery staple', encoded).then(
      () => (completed += 1),
      () => undefined, // refused: server_busy at once, or by close() below when still waiting
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, BURST_WINDOW_MS));
  const { peakInFlight, rejected: busy } = service.stats();
  await service.close();
  await Promise.all(burst);
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  return { rssBefore, rssPeak, completed, peakInFlight, busy };
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
}

export async function benchmarkPasswordHashing(): Promise<void> {
  const settings = productionSettings();
  const uvThreads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  console.log(
    `argon2id m=${settings.ARGON2_MEMORY_COST} t=${settings.ARGON2_TIME_COST} p=${settings.ARGON2_PARALLELISM}; ` +
      `defaults: concurrency ${settings.PASSWORD_HASHING_CONCURRENCY}, queue limit ${settings.PASSWORD_HASHING_QUEUE_LIMIT}; ` +
      `${availableParallelism()} CPUs; libuv thread pool ${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`,
  );

  const service = createService();
  const encoded = await service.hash('correct horse battery staple');
  await service.close();
  const throughput: string[][] = [['hashes in flight', 'hashes/s', 'ms/hash', 'in flight (mean, peak)']];
  for (const inFlight of IN_FLIGHT) {
    const { rate, msPerHash, meanInFlight, peakInFlight } = await measureThroughput(encoded, inFlight);
    throughput.push([String(inFlight), rate.toFixed(2), msPerHash.toFixed(0), `${meanInFlight.toFixed(2)}, ${peakInFlight}`]);
  }
  printTable(throughput);
  if (uvThreads < Math.max(...IN_FLIGHT)) {
    // argon2 and PBKDF2 compute on libuv's thread pool: hashes in flight beyond its size wait there.
    console.log(`(argon2 computes on libuv's ${uvThreads} threads: set UV_THREADPOOL_SIZE=${Math.max(...IN_FLIGHT) + 1} to compute all ${Math.max(...IN_FLIGHT)} at once)`);
  }

  const burst = await measureBurst(encoded);
  console.log('');
  printTable([
    ['burst', 'RSS before', 'peak RSS', 'peak - before', 'peak in flight', `completed in ${BURST_WINDOW_MS / 1000} s`, 'refused busy'],
    [
      `${BURST_SIZE} verifications`,
      `${(burst.rssBefore / MiB).toFixed(0)} MiB`,
      `${(burst.rssPeak / MiB).toFixed(0)} MiB`,
      `${((burst.rssPeak - burst.rssBefore) / MiB).toFixed(0)} MiB`,
      String(burst.peakInFlight),
      String(burst.completed),
      String(burst.busy),
    ],
  ]);
}
