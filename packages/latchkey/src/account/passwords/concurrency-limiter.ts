export interface ConcurrencyStats {
  /** Tasks running now. */
  inFlight: number;
  /** Tasks waiting for a slot. */
  queued: number;
  /** The most tasks that ever ran at once. */
  peakInFlight: number;
  /** Tasks finished, successfully or not. */
  completed: number;
}

interface Waiter {
  start: () => void;
  cancel: (error: Error) => void;
}

/**
 * Runs at most `limit` tasks at once; the rest wait in first-in, first-out order. A finishing
 * task hands its slot straight to the oldest waiter, so a newcomer can never overtake the queue.
 *
 * A waiting task is a closure and a promise, a few hundred bytes, while a running argon2 hash
 * holds its whole memory cost (100 MiB with Django's parameters). Bounding the running tasks is
 * what keeps a burst of logins from exhausting memory.
 */
export class ConcurrencyLimiter {
  readonly #limit: number;
  readonly #waiting: Waiter[] = [];
  readonly #onIdle: (() => void)[] = [];
  #inFlight = 0;
  #peakInFlight = 0;
  #completed = 0;
  #closedError: Error | null = null;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`The concurrency limit must be a positive integer, not ${limit}.`);
    this.#limit = limit;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await task();
    } finally {
      this.#completed += 1;
      this.#release();
    }
  }

  stats(): ConcurrencyStats {
    return { inFlight: this.#inFlight, queued: this.#waiting.length, peakInFlight: this.#peakInFlight, completed: this.#completed };
  }

  /** Refuses new tasks and rejects the waiting ones with `error`; running tasks finish. */
  close(error: Error): void {
    this.#closedError = error;
    for (const waiter of this.#waiting.splice(0)) waiter.cancel(error);
  }

  /** Resolves once no task is running or waiting; used to shut down only after the last one. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#onIdle.push(resolve));
  }

  #acquire(): Promise<void> {
    if (this.#closedError !== null) return Promise.reject(this.#closedError);
    if (this.#inFlight < this.#limit) {
      this.#inFlight += 1;
      this.#peakInFlight = Math.max(this.#peakInFlight, this.#inFlight);
      return Promise.resolve();
    }
    return new Promise<void>((start, cancel) => {
      this.#waiting.push({ start, cancel });
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    // The slot passes to the next waiter without being freed, so inFlight never exceeds the limit.
    if (next !== undefined) {
      next.start();
      return;
    }
    this.#inFlight -= 1;
    if (this.#inFlight === 0) for (const resolve of this.#onIdle.splice(0)) resolve();
  }
}
