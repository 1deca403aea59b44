import { randomInt } from 'node:crypto';
import { constantTimeEqual } from '../../core/crypto.js';
import type { BcryptWorkerPool } from './bcrypt-worker-pool.js';
import type { PasswordHasher } from './hasher.js';

const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MIN_ROUNDS = 4;
const MAX_ROUNDS = 31;

/**
 * Django's two bcrypt hashers, `bcrypt_sha256$` and `bcrypt$`, each followed by a bcrypt string.
 * `$2b$` is what Django (pyca/bcrypt) writes; `$2a$` (older py-bcrypt) and `$2y$` are read too:
 * pyca/bcrypt cuts every password to 72 bytes before hashing, whatever the prefix, so the three
 * hash alike, as they do in bcryptjs. After the cost come 22 characters of salt and 31 of digest.
 */
function parse(algorithm: 'bcrypt' | 'bcrypt_sha256', encoded: string): { bcrypt: string; rounds: number } | null {
  const prefix = `${algorithm}$`;
  if (!encoded.startsWith(prefix)) return null;
  const bcrypt = encoded.slice(prefix.length);
  const match = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/.exec(bcrypt);
  if (match === null) return null;
  const rounds = Number(match[1]);
  if (rounds < MIN_ROUNDS || rounds > MAX_ROUNDS) return null;
  return { bcrypt, rounds };
}

/**
 * A hasher of Django's bcrypt format for `algorithm`, feeding bcrypt `bcryptInput(password)`.
 * bcryptjs is pure JavaScript, so every hash runs in the worker pool, never on the event loop.
 */
export function createBcryptFormatHasher(
  algorithm: 'bcrypt' | 'bcrypt_sha256',
  bcryptInput: (password: string) => string,
  rounds: number,
  workers: BcryptWorkerPool,
): PasswordHasher {
  return {
    algorithm,

    async encode(password) {
      return `${algorithm}$${(await workers.hash(bcryptInput(password), rounds)).bcrypt}`;
    },

    recognizes(encoded) {
      return parse(algorithm, encoded) !== null;
    },

    async verify(password, encoded) {
      const parsed = parse(algorithm, encoded);
      if (parsed === null) return false;
      // Recompute with the stored salt and cost, then compare whole strings as Django does.
      const recomputed = await workers.hash(bcryptInput(password), parsed.bcrypt);
      return constantTimeEqual(recomputed.bcrypt, parsed.bcrypt);
    },

    mustUpdate(encoded) {
      const parsed = parse(algorithm, encoded);
      return parsed === null || parsed.rounds !== rounds;
    },

    makeDecoy() {
      let saltAndDigest = '';
      for (let index = 0; index < 53; index += 1) {
        saltAndDigest += BCRYPT_ALPHABET.charAt(randomInt(BCRYPT_ALPHABET.length));
      }
      return `${algorithm}$$2b$${String(rounds).padStart(2, '0')}$${saltAndDigest}`;
    },
  };
}
