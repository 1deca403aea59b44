import { LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';

export interface ConcurrencyStats {
  /** Tasks running now. */
  inFlight: number;
  /** Tasks waiting for a slot. */
  queued: number;
  /** The most tasks that ever ran at once. */
  peakInFlight: number;
  /** Tasks finished, successfully or not. */
  completed: number;
  /** Tasks refused at once because `maxQueued` tasks were already waiting. */
  rejected: number;
}

interface Waiter {
  /** Calls the task in the slot just handed over. */
  start: () => void;
  cancel: (error: Error) => void;
}

/** The message of the LatchkeyError('server_busy') a full queue answers with. */
export const QUEUE_FULL_MESSAGE = msg('Too many password checks are waiting; try again shortly.');

/**
 * Runs at most `limit` tasks at once; up to `maxQueued` more wait in first-in, first-out order,
 * and a task arriving when that many already wait is refused at once with
 * LatchkeyError('server_busy'). A finishing task hands its slot straight to the oldest waiter, so
 * a newcomer can never overtake the queue.
 *
 * A waiting task is a closure and a promise, a few hundred bytes, while a running argon2 hash
 * holds its whole memory cost (100 MiB with Django's parameters). Bounding the running tasks is
 * what keeps a burst of logins from exhausting memory. Bounding the waiting ones keeps a flood
 * from piling up work that would be done only after its clients gave up: past `maxQueued`, an
 * immediate "busy" (HTTP 503) serves a client better than an answer minutes late.
 */
export class ConcurrencyLimiter {
  readonly #limit: number;
  readonly #maxQueued: number;
  readonly #waiting: Waiter[] = [];
  readonly #onIdle: (() => void)[] = [];
  #inFlight = 0;
  #peakInFlight = 0;
  #completed = 0;
  #rejected = 0;
  #closedError: Error | null = null;

  constructor(limit: number, maxQueued: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`The concurrency limit must be a positive integer, not ${limit}.`);
    if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new RangeError(`The queue bound must be a non-negative integer, not ${maxQueued}.`);
    this.#limit = limit;
    this.#maxQueued = maxQueued;
  }

  /**
   * Runs `task` now if a slot is free, or queues it. Refuses it with LatchkeyError('server_busy')
   * when `maxQueued` tasks already wait, and with the close error once closed; either way `task`
   * is never called.
   */
  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#closedError !== null) return Promise.reject(this.#closedError);
    if (this.#inFlight < this.#limit) {
      this.#inFlight += 1;
      this.#peakInFlight = Math.max(this.#peakInFlight, this.#inFlight);
      return this.#execute(task);
    }
    if (this.#waiting.length >= this.#maxQueued) {
      this.#rejected += 1;
      return Promise.reject(new LatchkeyError('server_busy', QUEUE_FULL_MESSAGE));
    }
    return new Promise<T>((resolve, reject) => {
      // The task is called in the same step that hands it a slot, so a task is either waiting
      // (and close() can still refuse it) or running: never between the two.
      this.#waiting.push({
        start: () => {
          this.#execute(task).then(resolve, reject);
        },
        cancel: reject,
      });
    });
  }

  stats(): ConcurrencyStats {
    return {
      inFlight: this.#inFlight,
      queued: this.#waiting.length,
      peakInFlight: this.#peakInFlight,
      completed: this.#completed,
      rejected: this.#rejected,
    };
  }

  /**
   * Refuses new tasks and rejects the waiting ones with `error`; running tasks finish. A waiting
   * task is taken out of the queue here, so its function is never called.
   */
  close(error: Error): void {
    this.#closedError = error;
    for (const waiter of this.#waiting.splice(0)) waiter.cancel(error);
  }

  /** Resolves once no task is running or waiting; used to shut down only after the last one. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#onIdle.push(resolve));
  }

  async #execute<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } finally {
      this.#completed += 1;
      this.#release();
    }
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
