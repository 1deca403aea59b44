import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { createBcryptWorkerPool } from './bcrypt-worker-pool.js';

const workers = createBcryptWorkerPool(1);
afterAll(() => workers.close());

/** Counts turns of the event loop until `promise` settles; a blocked loop counts none. */
async function eventLoopTurnsWhile(promise: Promise<unknown>): Promise<number> {
  let turns = 0;
  let settled = false;
  void promise.finally(() => {
    settled = true;
  });
  while (!settled) {
    await new Promise((resolve) => setImmediate(resolve));
    turns += 1;
  }
  return turns;
}

describe('bcrypt worker pool', () => {
  it('starts no thread until bcrypt is needed', () => {
    expect(createBcryptWorkerPool(4).workerThreadIds()).toEqual([]);
  });

  it('hashes in a worker thread while the event loop keeps turning', async () => {
    // Warm up, so that the measured call is a hash and not the start of a thread.
    await workers.hash('warm up', 4);
    const hashing = workers.hash('a'.repeat(64), 10);
    // bcryptjs on this thread would run to completion inside one turn: zero turns while it ran.
    const turns = await eventLoopTurnsWhile(hashing);
    expect(await hashing).toMatch(/^\$2b\$10\$[./A-Za-z0-9]{53}$/);
    expect(turns).toBeGreaterThan(0);
    const ids = workers.workerThreadIds();
    expect(ids.length).toBe(1);
    expect(ids).not.toContain(threadId);
  });

  it('recomputes a stored hash from its own salt and cost', async () => {
    const stored = await workers.hash('secret', 4);
    expect(await workers.hash('secret', stored)).toBe(stored);
    expect(await workers.hash('other', stored)).not.toBe(stored);
  });

  it('refuses work once closed', async () => {
    const pool = createBcryptWorkerPool(1);
    await pool.hash('x', 4);
    await pool.close();
    expect(pool.workerThreadIds()).toEqual([]);
    await expect(pool.hash('x', 4)).rejects.toThrow('closed');
  });
});
