import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { createBcryptWorkerPool } from './bcrypt-worker-pool.js';

const workers = createBcryptWorkerPool(1);
afterAll(() => workers.close());

describe('bcrypt worker pool', () => {
  it('starts no thread until bcrypt is needed', () => {
    expect(createBcryptWorkerPool(4).workerThreadIds()).toEqual([]);
  });

  it('hashes in a worker thread, never on this one', async () => {
    const result = await workers.hash('a'.repeat(64), 4);
    expect(result.bcrypt).toMatch(/^\$2b\$04\$[./A-Za-z0-9]{53}$/);
    // The thread id is the one the worker read from node:worker_threads while it hashed.
    expect(result.threadId).not.toBe(threadId);
    expect(workers.workerThreadIds()).toEqual([result.threadId]);
  });

  it('recomputes a stored hash from its own salt and cost', async () => {
    const stored = (await workers.hash('secret', 4)).bcrypt;
    expect((await workers.hash('secret', stored)).bcrypt).toBe(stored);
    expect((await workers.hash('other', stored)).bcrypt).not.toBe(stored);
  });

  it('refuses work once closed', async () => {
    const pool = createBcryptWorkerPool(1);
    await pool.hash('x', 4);
    await pool.close();
    expect(pool.workerThreadIds()).toEqual([]);
    await expect(pool.hash('x', 4)).rejects.toThrow('closed');
  });
});
