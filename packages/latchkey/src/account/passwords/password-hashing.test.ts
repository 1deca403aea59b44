import { afterEach, describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { fastHashingOptions } from './fast-hashing-options.js';
import { HASHER_NAMES, type HasherName } from './hasher.js';
import { createPasswordHashing, DJANGO_HASHING_DEFAULTS, type PasswordHashing, type PasswordHashingOptions } from './password-hashing.js';
import { makeUnusablePassword } from './unusable-password.js';

const opened: PasswordHashing[] = [];
function hashing(overrides: Partial<PasswordHashingOptions> = {}): PasswordHashing {
  const service = createPasswordHashing(fastHashingOptions(overrides));
  opened.push(service);
  return service;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((service) => service.close()));
});

/** The other hashers after `first`, so that each can be made the one that writes new hashes. */
function firstThen(first: HasherName): HasherName[] {
  return [first, ...HASHER_NAMES.filter((name) => name !== first)];
}

describe('createPasswordHashing', () => {
  it.each(HASHER_NAMES)('hashes with %s when it comes first and verifies the result', async (name) => {
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
    for (const name of HASHER_NAMES) {
      const service = hashing({ hashers: firstThen(name), concurrency: 2 });
      const encoded = await service.hash('pw');
      const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => service.verify(index % 2 === 0 ? 'pw' : 'no', encoded)));
      expect(answers.filter((answer) => answer.valid)).toHaveLength(10);
      expect(service.stats().peakInFlight, name).toBe(2);
    }
  });

  it('keeps the event loop turning while bcrypt hashes', async () => {
    const service = hashing({ hashers: firstThen('bcrypt_sha256'), bcryptRounds: 10 });
    await service.hash('warm up the worker');
    let turns = 0;
    let done = false;
    const hashed = service.hash('pw').finally(() => (done = true));
    while (!done) {
      await new Promise((resolve) => setImmediate(resolve));
      turns += 1;
    }
    expect(await hashed).toMatch(/^bcrypt_sha256\$\$2b\$10\$/);
    // bcryptjs on the main thread would finish within a single turn of the loop.
    expect(turns).toBeGreaterThan(0);
  });
});

describe('configuration and lifecycle', () => {
  it("defaults to Django's parameters and writes the format Django writes with them", async () => {
    expect(DJANGO_HASHING_DEFAULTS).toEqual({
      hashers: ['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256'],
      argon2: { memoryCost: 102_400, timeCost: 2, parallelism: 8 },
      pbkdf2Iterations: 1_500_000,
      bcryptRounds: 12,
    });
    expect(Object.isFrozen(DJANGO_HASHING_DEFAULTS.hashers)).toBe(true);
    const service = createPasswordHashing({ ...DJANGO_HASHING_DEFAULTS, concurrency: 1, maxPasswordBytes: 4096 });
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
      { concurrency: 0 },
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
  });
});
