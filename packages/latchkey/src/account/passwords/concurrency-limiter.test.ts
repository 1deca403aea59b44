import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';

/** A task the test finishes by hand, so ordering is decided by the test, not by timing. */
function manualTask(): { promise: Promise<void>; finish: () => void; fail: (error: Error) => void } {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { promise, finish, fail };
}

/** Lets every already-settled promise callback run. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

describe('ConcurrencyLimiter', () => {
  it('runs at most `limit` tasks and starts the waiting ones in arrival order', async () => {
    const limiter = new ConcurrencyLimiter(2, 10);
    const tasks = Array.from({ length: 5 }, () => manualTask());
    const started: number[] = [];
    const runs = tasks.map((task, index) =>
      limiter.run(async () => {
        started.push(index);
        await task.promise;
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    expect(limiter.stats()).toMatchObject({ inFlight: 2, queued: 3 });

    tasks[1]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2]);

    // A newcomer arriving now waits behind 3 and 4, even though a slot frees up first.
    const late = manualTask();
    const lateRun = limiter.run(async () => {
      started.push(99);
      await late.promise;
    });
    tasks[0]!.finish();
    tasks[2]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    tasks[3]!.finish();
    tasks[4]!.finish();
    late.finish();
    await Promise.all([...runs, lateRun]);
    expect(started).toEqual([0, 1, 2, 3, 4, 99]);
    expect(limiter.stats()).toEqual({ inFlight: 0, queued: 0, peakInFlight: 2, completed: 6, rejected: 0 });
  });

  it('frees the slot of a task that fails', async () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(() => Promise.resolve('next'))).resolves.toBe('next');
    expect(limiter.stats()).toMatchObject({ inFlight: 0, completed: 2 });
  });

  it('refuses a task at once with server_busy when maxQueued tasks already wait, and never calls it', async () => {
    const limiter = new ConcurrencyLimiter(1, 2);
    const tasks = Array.from({ length: 3 }, () => manualTask());
    const runs = tasks.map((task) => limiter.run(() => task.promise));
    let called = false;
    const refused: unknown = await limiter
      .run(() => {
        called = true;
        return Promise.resolve();
      })
      .catch((error: unknown) => error);
    expect(isLatchkeyError(refused, 'server_busy')).toBe(true);
    expect(called).toBe(false);
    expect(limiter.stats()).toMatchObject({ inFlight: 1, queued: 2, rejected: 1 });

    // One slot frees, one waiter starts, and the queue has room for one newcomer again.
    tasks[0]!.finish();
    await settle();
    const late = manualTask();
    const lateRun = limiter.run(() => late.promise);
    expect(limiter.stats()).toMatchObject({ inFlight: 1, queued: 2, rejected: 1 });
    for (const task of [...tasks, late]) task.finish();
    await Promise.all([...runs, lateRun]);
    expect(limiter.stats()).toEqual({ inFlight: 0, queued: 0, peakInFlight: 1, completed: 4, rejected: 1 });
  });

  it('with maxQueued 0, runs up to the limit and refuses the rest', async () => {
    const limiter = new ConcurrencyLimiter(2, 0);
    const task = manualTask();
    const runs = [limiter.run(() => task.promise), limiter.run(() => task.promise)];
    await expect(limiter.run(() => Promise.resolve())).rejects.toMatchObject({ code: 'server_busy' });
    task.finish();
    await Promise.all(runs);
    expect(limiter.stats()).toMatchObject({ completed: 2, rejected: 1 });
  });

  it('rejects waiting and new tasks once closed, never calling them, and lets running ones finish', async () => {
    const limiter = new ConcurrencyLimiter(1, 10);
    const running = manualTask();
    const first = limiter.run(() => running.promise.then(() => 'done'));
    let waitingCalled = false;
    const waiting = limiter.run(() => {
      waitingCalled = true;
      return Promise.resolve('never');
    });
    await settle();
    limiter.close(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
    await expect(limiter.run(() => Promise.resolve('new'))).rejects.toThrow('closed');
    let idle = false;
    const idling = limiter.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    running.finish();
    await expect(first).resolves.toBe('done');
    await idling;
    expect(idle).toBe(true);
    expect(waitingCalled).toBe(false);
    expect(limiter.stats()).toMatchObject({ completed: 1, queued: 0 });
  });

  it('refuses a limit that is not a positive integer and a queue bound that is not a non-negative integer', () => {
    expect(() => new ConcurrencyLimiter(0, 10)).toThrow(RangeError);
    expect(() => new ConcurrencyLimiter(1.5, 10)).toThrow(RangeError);
    expect(() => new ConcurrencyLimiter(1, -1)).toThrow(RangeError);
    expect(() => new ConcurrencyLimiter(1, 0.5)).toThrow(RangeError);
  });
});
