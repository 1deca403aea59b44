import { Piscina } from 'piscina';

interface BcryptTask {
  secret: string;
  salt: string | number;
}

export interface BcryptResult {
  /** The bcrypt string (`$2b$<rounds>$<salt><digest>`). */
  bcrypt: string;
  /** The worker thread that computed it, as it reported itself; never the main thread's. */
  threadId: number;
}

export interface BcryptWorkerPool {
  /** bcrypt of `secret` in a worker thread; see bcrypt-worker.js for the arguments. */
  hash(secret: string, salt: string | number): Promise<BcryptResult>;
  /** The thread ids of the running workers; tests use them to show bcrypt left the main thread. */
  workerThreadIds(): number[];
  /** Ends the worker threads. */
  close(): Promise<void>;
}

/** Workers idle this long exit; the next bcrypt call starts one again. */
const IDLE_TIMEOUT_MS = 60_000;

/**
 * A pool of at most `maxThreads` worker threads for bcryptjs, started on the first bcrypt call,
 * so a project that never meets a bcrypt hash never starts a thread. The hashing service bounds
 * how many tasks reach the pool, so Piscina's own queue stays short.
 */
export function createBcryptWorkerPool(maxThreads: number): BcryptWorkerPool {
  let pool: Piscina<BcryptTask, BcryptResult> | null = null;
  let closed = false;

  function startedPool(): Piscina<BcryptTask, BcryptResult> {
    if (closed) throw new Error('The bcrypt worker pool is closed.');
    pool ??= new Piscina<BcryptTask, BcryptResult>({
      filename: new URL('./bcrypt-worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads,
      idleTimeout: IDLE_TIMEOUT_MS,
    });
    return pool;
  }

  return {
    async hash(secret, salt) {
      return startedPool().run({ secret, salt });
    },

    workerThreadIds() {
      return pool === null ? [] : pool.threads.map((worker) => worker.threadId);
    },

    async close() {
      closed = true;
      const running = pool;
      pool = null;
      // close() lets the tasks already handed to Piscina finish before the threads end.
      await running?.close();
    },
  };
}
