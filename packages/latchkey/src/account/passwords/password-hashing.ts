import { availableParallelism } from 'node:os';
import { LatchkeyError } from '../../core/errors.js';
import { createArgon2Hasher, type Argon2Parameters } from './argon2-hasher.js';
import { createBcryptHasher } from './bcrypt-hasher.js';
import { createBcryptSha256Hasher } from './bcrypt-sha256-hasher.js';
import { createBcryptWorkerPool, type BcryptWorkerPool } from './bcrypt-worker-pool.js';
import { ConcurrencyLimiter, type ConcurrencyStats } from './concurrency-limiter.js';
import { HASHER_NAMES, READ_ONLY_HASHERS, type HasherName } from '../../config/choices.js';
import { algorithmOf, type PasswordHasher } from './hasher.js';
import { createPbkdf2Hasher } from './pbkdf2-hasher.js';
import { isUsablePassword } from './unusable-password.js';
import { nmsg } from '../../core/i18n/message.js';

export interface PasswordHashingOptions {
  /** The first makes new hashes; the others are accepted and upgraded on the next login. */
  hashers: HasherName[];
  argon2: Argon2Parameters;
  pbkdf2Iterations: number;
  bcryptRounds: number;
  /** Hashes in flight at most, across all hashers; the rest wait in a FIFO queue. */
  concurrency: number;
  /**
   * Calls waiting in that queue at most. One more hash, verify or verifyDummy fails at once with
   * LatchkeyError('server_busy') (HTTP 503) instead of waiting. 0 means none ever waits.
   */
  maxQueued: number;
  /** Longer input (in UTF-8 bytes) is never hashed. */
  maxPasswordBytes: number;
}

export interface PasswordVerification {
  valid: boolean;
  /** The password was right but its hash should be replaced with `hash(password)` (Django's must_update). */
  needsRehash: boolean;
}

/**
 * Every method that hashes throws LatchkeyError('server_busy') at once, without hashing, when
 * `maxQueued` calls are already waiting for a slot.
 */
export interface PasswordHashing {
  /** Throws LatchkeyError('password_invalid') when the password is over maxPasswordBytes. */
  hash(password: string): Promise<string>;
  /**
   * Checks `password` against a stored hash. A missing or unusable password, or a hash in an
   * unknown or malformed format, is invalid but still costs one verification with the first hasher,
   * so an account without a password takes as long to refuse as any other. A password over
   * maxPasswordBytes is refused at once without hashing, whatever the account.
   */
  verify(password: string, encoded: string | null): Promise<PasswordVerification>;
  /** Costs exactly one verification with the first hasher; for logins naming no known user. */
  verifyDummy(password: string): Promise<void>;
  /**
   * `completed` counts hash computations, for tests that check how many a request cost;
   * `rejected` counts calls refused with 'server_busy'.
   */
  stats(): ConcurrencyStats;
  /** Ends the worker threads; waiting calls are rejected and never hashed, running ones finish. */
  close(): Promise<void>;
}

const INVALID: PasswordVerification = Object.freeze({ valid: false, needsRehash: false });

export function createPasswordHashing(options: PasswordHashingOptions): PasswordHashing {
  checkOptions(options);
  const limiter = new ConcurrencyLimiter(options.concurrency, options.maxQueued);
  // More bcrypt threads than cores would only make the threads take turns.
  const bcryptWorkers = createBcryptWorkerPool(Math.min(options.concurrency, availableParallelism()));
  const hashers = new Map<string, PasswordHasher>(options.hashers.map((name) => [name, createHasher(name, options, bcryptWorkers)]));
  const preferred = hashers.get(options.hashers[0]!)!;
  const decoy = preferred.makeDecoy();

  function isTooLong(password: string): boolean {
    return Buffer.byteLength(password, 'utf8') > options.maxPasswordBytes;
  }

  /** The configured hasher that can check `stored`, if any: none for unusable or unknown values. */
  function hasherFor(stored: string): PasswordHasher | undefined {
    if (!isUsablePassword(stored)) return undefined;
    const hasher = hashers.get(algorithmOf(stored));
    return hasher?.recognizes(stored) ? hasher : undefined;
  }

  async function verifyDecoy(password: string): Promise<void> {
    await limiter.run(() => preferred.verify(password, decoy));
  }

  return {
    async hash(password) {
      if (isTooLong(password)) {
        const max = options.maxPasswordBytes;
        throw new LatchkeyError('password_invalid', nmsg('Passwords longer than {max} byte are refused.', 'Passwords longer than {max} bytes are refused.', max, { max }), { param: 'password' });
      }
      return limiter.run(() => preferred.encode(password));
    },

    async verify(password, encoded) {
      if (isTooLong(password)) return INVALID;
      const stored = encoded ?? ''; // no stored hash at all is as unusable as a '!' marker
      const hasher = hasherFor(stored);
      if (hasher === undefined) {
        await verifyDecoy(password);
        return INVALID;
      }
      const valid = await limiter.run(() => hasher.verify(password, stored));
      // Only a right password can be rehashed, so needsRehash is never reported for a wrong one.
      return { valid, needsRehash: valid && (hasher !== preferred || preferred.mustUpdate(stored)) };
    },

    async verifyDummy(password) {
      // Same rule as verify: an over-long password costs nothing for known and unknown users alike.
      if (isTooLong(password)) return;
      await verifyDecoy(password);
    },

    stats() {
      return limiter.stats();
    },

    async close() {
      limiter.close(new Error('Password hashing has been closed.'));
      // A running task may not have reached the worker pool yet: let it finish first.
      await limiter.idle();
      await bcryptWorkers.close();
    },
  };
}

function createHasher(name: HasherName, options: PasswordHashingOptions, bcryptWorkers: BcryptWorkerPool): PasswordHasher {
  switch (name) {
    case 'argon2':
      return createArgon2Hasher(options.argon2);
    case 'pbkdf2_sha256':
      return createPbkdf2Hasher('sha256', options.pbkdf2Iterations);
    case 'pbkdf2_sha1':
      return createPbkdf2Hasher('sha1', options.pbkdf2Iterations);
    case 'bcrypt_sha256':
      return createBcryptSha256Hasher(options.bcryptRounds, bcryptWorkers);
    case 'bcrypt':
      return createBcryptHasher(options.bcryptRounds, bcryptWorkers);
  }
}

/** A waiting call costs a few hundred bytes: a million of them is still a fraction of a GiB. */
const MAX_QUEUED = 1_000_000;

function checkOptions(options: PasswordHashingOptions): void {
  const problems: string[] = [];
  const { hashers, argon2 } = options;
  if (hashers.length === 0) problems.push('hashers must name at least one hasher');
  for (const name of hashers) if (!HASHER_NAMES.includes(name)) problems.push(`hashers: unknown hasher "${String(name)}"`);
  if (new Set(hashers).size !== hashers.length) problems.push('hashers must not repeat a hasher');
  if (hashers[0] !== undefined && READ_ONLY_HASHERS.includes(hashers[0])) {
    problems.push(`hashers: ${hashers[0]} only checks stored passwords and cannot write new hashes, so it cannot come first (bcrypt_sha256 writes bcrypt hashes without its 72-byte limit)`);
  }
  const integers: [string, number, number, number][] = [
    ['argon2.memoryCost', argon2.memoryCost, 8 * argon2.parallelism, 2 ** 32 - 1],
    ['argon2.timeCost', argon2.timeCost, 1, 2 ** 32 - 1],
    ['argon2.parallelism', argon2.parallelism, 1, 255],
    ['pbkdf2Iterations', options.pbkdf2Iterations, 1, 2 ** 31 - 1],
    ['bcryptRounds', options.bcryptRounds, 4, 31],
    ['concurrency', options.concurrency, 1, 10_000],
    ['maxQueued', options.maxQueued, 0, MAX_QUEUED],
    ['maxPasswordBytes', options.maxPasswordBytes, 1, 2 ** 31 - 1],
  ];
  for (const [setting, value, min, max] of integers) {
    if (!Number.isInteger(value) || value < min || value > max) problems.push(`${setting} must be an integer from ${min} to ${max}, not ${value}`);
  }
  if (problems.length > 0) throw new LatchkeyError('configuration_invalid', `Invalid password hashing settings: ${problems.join('; ')}.`);
}
