import { threadId } from 'node:worker_threads';
import mainThreadBcrypt from 'bcryptjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import * as BcryptWorkerPoolModule from './bcrypt-worker-pool.js';
import { fastHashingOptions } from './fast-hashing-options.js';
import { HASHER_NAMES, READ_ONLY_HASHERS, type HasherName } from '../../config/choices.js';
import { createPasswordHashing, type PasswordHashing, type PasswordHashingOptions } from './password-hashing.js';
import { DJANGO_HASHING_DEFAULTS } from '../../config/defaults.js';
import { makeUnusablePassword } from './unusable-password.js';

const observed = vi.hoisted(() => ({
  /** The thread that computed each bcrypt hash, as the worker reported it. */
  bcryptThreads: [] as number[],
  /** Calls of bcryptjs functions on this thread; the mock below makes every one of them fail. */
  mainThreadBcryptCalls: [] as string[],
}));

// bcryptjs as loaded on this thread: every function records its call and throws. Worker threads
// load the real bcryptjs with plain Node, outside vitest's module graph, so this reaches only code
// that would hash on the main thread.
vi.mock('bcryptjs', async (importOriginal) => {
  const real = await importOriginal<{ default: Record<string, unknown> }>();
  const trapped = Object.fromEntries(
    Object.keys(real.default).map((name) => [
      name,
      vi.fn(() => {
        observed.mainThreadBcryptCalls.push(name);
        throw new Error(`bcryptjs.${name} was called on the main thread.`);
      }),
    ]),
  );
  return { ...trapped, default: trapped };
});

// The real worker pool, with every result's thread id recorded.
vi.mock('./bcrypt-worker-pool.js', async (importOriginal) => {
  const original = await importOriginal<typeof BcryptWorkerPoolModule>();
  return {
    ...original,
    createBcryptWorkerPool(maxThreads: number): BcryptWorkerPoolModule.BcryptWorkerPool {
      const pool = original.createBcryptWorkerPool(maxThreads);
      return {
        ...pool,
        async hash(secret, salt) {
          const result = await pool.hash(secret, salt);
          observed.bcryptThreads.push(result.threadId);
          return result;
        },
      };
    },
  };
});

const opened: PasswordHashing[] = [];
function hashing(overrides: Partial<PasswordHashingOptions> = {}): PasswordHashing {
  const service = createPasswordHashing(fastHashingOptions(overrides));
  opened.push(service);
  return service;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((service) => service.close()));
});

/** The hashers that can write new hashes (all but the read-only ones). */
const WRITERS = HASHER_NAMES.filter((name) => !READ_ONLY_HASHERS.includes(name));

/** The other hashers after `first`, so that each can be made the one that writes new hashes. */
function firstThen(first: HasherName): HasherName[] {
  return [first, ...HASHER_NAMES.filter((name) => name !== first)];
}

describe('createPasswordHashing', () => {
  it.each(WRITERS)('hashes with %s when it comes first and verifies the result', async (name) => {
    const service = hashing({ hashers: firstThen(name) });
    const encoded = await service.hash('correct horse battery staple');
    expect(encoded.startsWith(`${name}$`)).toBe(true);
    expect(await service.verify('correct horse battery staple', encoded)).toEqual({ valid: true, needsRehash: false });
    expect(await service.verify('Correct horse battery staple', encoded)).toEqual({ valid: false, needsRehash: false });
  });

  it('accepts hashes of the other configured hashers and asks to upgrade them', async () => {
    const legacy = hashing({ hashers: firstThen('bcrypt_sha256') });
    const encoded = await legacy.hash('pw-legacy');
    const service = hashing();
    expect(await service.verify('pw-legacy', encoded)).toEqual({ valid: true, needsRehash: true });
    // Only a right password is ever rehashed.
    expect(await service.verify('wrong', encoded)).toEqual({ valid: false, needsRehash: false });
  });

  it('asks to rehash when the first hasher is configured with other parameters', async () => {
    const encoded = await hashing().hash('pw');
    expect((await hashing({ argon2: { memoryCost: 2048, timeCost: 1, parallelism: 1 } }).verify('pw', encoded)).needsRehash).toBe(true);
    const pbkdf2 = await hashing({ hashers: firstThen('pbkdf2_sha256') }).hash('pw');
    expect((await hashing({ hashers: firstThen('pbkdf2_sha256'), pbkdf2Iterations: 2000 }).verify('pw', pbkdf2)).needsRehash).toBe(true);
    const bcrypt = await hashing({ hashers: firstThen('bcrypt_sha256') }).hash('pw');
    expect((await hashing({ hashers: firstThen('bcrypt_sha256'), bcryptRounds: 5 }).verify('pw', bcrypt)).needsRehash).toBe(true);
  });

  it('refuses hashes of a hasher that is not configured', async () => {
    const bcrypt = await hashing({ hashers: ['bcrypt_sha256'] }).hash('pw');
    expect(await hashing({ hashers: ['argon2'] }).verify('pw', bcrypt)).toEqual({ valid: false, needsRehash: false });
  });

  it('works with passwords of 64 characters and more', async () => {
    const service = hashing();
    for (const password of ['p'.repeat(64), 'ü'.repeat(100), 'long passphrase '.repeat(60)]) {
      expect((await service.verify(password, await service.hash(password))).valid).toBe(true);
    }
  });
});

describe('passwords over maxPasswordBytes', () => {
  const limit = 4096;

  it('are never hashed: hash throws, verify and verifyDummy return at once', async () => {
    const service = hashing({ maxPasswordBytes: limit });
    const encoded = await service.hash('pw');
    const before = service.stats().completed;
    for (const password of ['x'.repeat(limit + 1), 'x'.repeat(1024 * 1024), 'é'.repeat(limit / 2 + 1)]) {
      const error: unknown = await service.hash(password).catch((caught: unknown) => caught);
      expect(isLatchkeyError(error, 'password_invalid')).toBe(true);
      expect(await service.verify(password, encoded)).toEqual({ valid: false, needsRehash: false });
      await service.verifyDummy(password);
    }
    expect(service.stats()).toMatchObject({ completed: before, inFlight: 0, queued: 0 });
  });

  it('counts bytes, not characters: exactly the limit is hashed', async () => {
    const service = hashing({ maxPasswordBytes: limit });
    const password = 'é'.repeat(limit / 2); // 2 bytes each in UTF-8
    expect((await service.verify(password, await service.hash(password))).valid).toBe(true);
  });
});

describe('one verification per attempt, whatever the account', () => {
  const oneHash = async (service: PasswordHashing, attempt: () => Promise<unknown>): Promise<number> => {
    const before = service.stats().completed;
    await attempt();
    return service.stats().completed - before;
  };

  it('verifyDummy costs exactly one hash with the first hasher', async () => {
    const service = hashing();
    expect(await oneHash(service, () => service.verifyDummy('guess'))).toBe(1);
  });

  it('an unusable, missing, unknown or malformed stored password costs one hash and is invalid', async () => {
    const service = hashing();
    const stored = [makeUnusablePassword(), null, '', 'md5$salt$0123456789abcdef', 'argon2$garbage', 'pbkdf2_sha256$abc$salt$hash', '!'];
    for (const encoded of stored) {
      let result: unknown;
      expect(await oneHash(service, async () => (result = await service.verify('guess', encoded)))).toBe(1);
      expect(result).toEqual({ valid: false, needsRehash: false });
    }
  });

  it('a real verification costs one hash too', async () => {
    const service = hashing();
    const encoded = await service.hash('pw');
    expect(await oneHash(service, () => service.verify('wrong', encoded))).toBe(1);
  });
});

describe('bounded concurrency', () => {
  it('keeps at most `concurrency` hashes in flight and queues the rest, all answered correctly', async () => {
    const service = hashing({ concurrency: 2 });
    const encoded = await service.hash('right');
    const attempts = Array.from({ length: 50 }, (_, index) => (index % 3 === 0 ? 'right' : `wrong-${index}`));
    const results = attempts.map((password) => service.verify(password, encoded));
    expect(service.stats()).toMatchObject({ inFlight: 2, queued: 48 });
    const answers = await Promise.all(results);
    expect(answers.map((answer) => answer.valid)).toEqual(attempts.map((password) => password === 'right'));
    expect(service.stats()).toMatchObject({ inFlight: 0, queued: 0, peakInFlight: 2 });
  });

  it('holds for every hasher, bcrypt in its worker threads included', async () => {
    for (const name of WRITERS) {
      const service = hashing({ hashers: firstThen(name), concurrency: 2 });
      const encoded = await service.hash('pw');
      const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => service.verify(index % 2 === 0 ? 'pw' : 'no', encoded)));
      expect(answers.filter((answer) => answer.valid)).toHaveLength(10);
      expect(service.stats().peakInFlight, name).toBe(2);
    }
  });

  it('computes every bcrypt hash in a worker thread, none on the main thread', async () => {
    // The trap is live on this thread: any bcryptjs call here would throw and be recorded.
    expect(vi.isMockFunction(mainThreadBcrypt.hashSync)).toBe(true);
    const service = hashing({ hashers: firstThen('bcrypt_sha256') });
    const before = observed.bcryptThreads.length;
    const encoded = await service.hash('pw');
    expect(encoded).toMatch(/^bcrypt_sha256\$\$2b\$04\$/);
    expect(await service.verify('pw', encoded)).toEqual({ valid: true, needsRehash: false });
    expect(await service.verify('wrong', encoded)).toEqual({ valid: false, needsRehash: false });
    await service.verifyDummy('pw');
    // Four bcrypt computations, each reported by a worker thread that is not this one.
    const threads = observed.bcryptThreads.slice(before);
    expect(threads).toHaveLength(4);
    for (const computedOn of threads) expect(computedOn).not.toBe(threadId);
    expect(observed.mainThreadBcryptCalls).toEqual([]);
  });
});

describe("Django's plain bcrypt", () => {
  it('verifies its hashes in a worker thread and asks to upgrade them, but never writes them', async () => {
    const service = hashing();
    // A bcrypt string of the password itself (made in a worker), as Django's BCryptPasswordHasher stores it.
    const pool = BcryptWorkerPoolModule.createBcryptWorkerPool(1);
    const encoded = `bcrypt$${(await pool.hash('pw-plain', 4)).bcrypt}`;
    await pool.close();
    const before = observed.bcryptThreads.length;
    expect(await service.verify('pw-plain', encoded)).toEqual({ valid: true, needsRehash: true });
    expect(await service.verify('wrong', encoded)).toEqual({ valid: false, needsRehash: false });
    const threads = observed.bcryptThreads.slice(before);
    expect(threads).toHaveLength(2);
    for (const computedOn of threads) expect(computedOn).not.toBe(threadId);
    expect(observed.mainThreadBcryptCalls).toEqual([]);
    expect(() => createPasswordHashing(fastHashingOptions({ hashers: ['bcrypt', 'argon2'] }))).toThrow('bcrypt only checks stored passwords and cannot write new hashes');
  });
});

describe('bounded queue', () => {
  it('refuses a call at once with server_busy when maxQueued calls already wait, and answers the others', async () => {
    const service = hashing({ concurrency: 1, maxQueued: 2 });
    const encoded = await service.hash('right');
    const settled: string[] = [];
    const first = service.verify('right', encoded).finally(() => settled.push('first'));
    const waiting = [service.verify('wrong', encoded), service.verifyDummy('guess')].map((call) => call.finally(() => settled.push('waiting')));
    expect(service.stats()).toMatchObject({ inFlight: 1, queued: 2 });

    // A fourth call of any kind is refused: verify, verify for an account without a password,
    // verifyDummy (a login naming no known user) and hash.
    for (const fourth of [service.verify('right', encoded), service.verify('guess', null), service.verifyDummy('guess'), service.hash('new')]) {
      const error: unknown = await fourth.catch((caught: unknown) => caught);
      expect(isLatchkeyError(error, 'server_busy')).toBe(true);
      expect((error as Error).message).toBe('Too many password checks are waiting; try again shortly.');
    }
    // Refused before any of the three accepted calls was answered: nothing waited for a slot.
    expect(settled).toEqual([]);
    expect(service.stats()).toMatchObject({ inFlight: 1, queued: 2, rejected: 4 });

    expect(await first).toEqual({ valid: true, needsRehash: false });
    expect(await waiting[0]).toEqual({ valid: false, needsRehash: false });
    await waiting[1];
    // The refused calls hashed nothing: the first hash, then the three accepted calls.
    expect(service.stats()).toMatchObject({ inFlight: 0, queued: 0, completed: 4, rejected: 4 });
    // Once the queue has room again, calls are accepted again.
    expect((await service.verify('right', encoded)).valid).toBe(true);
  });

  it('with maxQueued 0, refuses every call that would have to wait', async () => {
    const service = hashing({ concurrency: 1, maxQueued: 0 });
    const running = service.hash('pw');
    await expect(service.verifyDummy('pw')).rejects.toMatchObject({ code: 'server_busy' });
    await expect(running).resolves.toMatch(/^argon2\$/);
  });

  it('lets a burst within the bound through: 500 verifications, 2 at a time, all answered', async () => {
    const service = hashing({ concurrency: 2, maxQueued: 1000 });
    const encoded = await service.hash('right');
    const attempts = Array.from({ length: 500 }, (_, index) => (index % 5 === 0 ? 'right' : `wrong-${index}`));
    const answers = await Promise.all(attempts.map((password) => service.verify(password, encoded)));
    expect(answers.map((answer) => answer.valid)).toEqual(attempts.map((password) => password === 'right'));
    const stats = service.stats();
    expect(stats).toMatchObject({ inFlight: 0, queued: 0, completed: 501, rejected: 0 });
    expect(stats.peakInFlight).toBeLessThanOrEqual(2);
  });
});

describe('configuration and lifecycle', () => {
  it("defaults to Django's parameters and writes the format Django writes with them", async () => {
    expect(DJANGO_HASHING_DEFAULTS).toEqual({
      hashers: ['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256', 'bcrypt'],
      argon2: { memoryCost: 102_400, timeCost: 2, parallelism: 8 },
      pbkdf2Iterations: 1_500_000,
      bcryptRounds: 12,
    });
    expect(Object.isFrozen(DJANGO_HASHING_DEFAULTS.hashers)).toBe(true);
    const service = createPasswordHashing({ ...DJANGO_HASHING_DEFAULTS, concurrency: 1, maxQueued: 10, maxPasswordBytes: 4096 });
    opened.push(service);
    const encoded = await service.hash('pw');
    expect(encoded).toMatch(/^argon2\$argon2id\$v=19\$m=102400,t=2,p=8\$[A-Za-z0-9+/]{30}\$[A-Za-z0-9+/]{43}$/);
    expect(await service.verify('pw', encoded)).toEqual({ valid: true, needsRehash: false });
  });

  it('refuses impossible settings, naming them', () => {
    const attempts: Partial<PasswordHashingOptions>[] = [
      { hashers: [] },
      { hashers: ['argon2', 'argon2'] },
      { hashers: ['md5' as HasherName] },
      { hashers: ['bcrypt'] },
      { hashers: ['bcrypt', 'argon2'] },
      { concurrency: 0 },
      { maxQueued: -1 },
      { maxQueued: 1.5 },
      { maxPasswordBytes: -1 },
      { bcryptRounds: 3 },
      { pbkdf2Iterations: 0.5 },
      { argon2: { memoryCost: 8, timeCost: 1, parallelism: 2 } },
    ];
    for (const overrides of attempts) {
      expect(() => createPasswordHashing(fastHashingOptions(overrides)), JSON.stringify(overrides)).toThrow(/Invalid password hashing settings/);
    }
  });

  it('refuses work after close, including calls that were waiting', async () => {
    const service = createPasswordHashing(fastHashingOptions({ concurrency: 1, hashers: firstThen('bcrypt_sha256') }));
    const running = service.hash('first');
    const waiting = service.hash('second');
    const closing = service.close();
    await expect(waiting).rejects.toThrow('closed');
    await expect(running).resolves.toMatch(/^bcrypt_sha256\$/);
    await closing;
    await expect(service.verifyDummy('x')).rejects.toThrow('closed');
    // Only the running call was ever hashed.
    expect(service.stats()).toMatchObject({ completed: 1, inFlight: 0, queued: 0 });
  });
});
