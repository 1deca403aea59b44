import { createHash, randomInt } from 'node:crypto';
import { constantTimeEqual } from '../../core/crypto.js';
import type { BcryptWorkerPool } from './bcrypt-worker-pool.js';
import type { PasswordHasher } from './hasher.js';

const PREFIX = 'bcrypt_sha256$';

// `$2b$` is what Django (py-bcrypt) writes; `$2a$` and `$2y$` hash identically for the ASCII hex
// input bcrypt_sha256 feeds it. After the cost come 22 characters of salt and 31 of digest.
const BCRYPT_SHA256_FORMAT = /^bcrypt_sha256\$(\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53})$/;

const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const MIN_ROUNDS = 4;
const MAX_ROUNDS = 31;

/**
 * bcrypt reads at most 72 bytes, so two long passwords sharing their first 72 bytes would match
 * each other. Django's bcrypt_sha256 feeds bcrypt the 64 ASCII characters of the password's hex
 * SHA-256 instead, so every byte of the password counts (Django ticket #20138).
 */
function bcryptInput(password: string): string {
  return createHash('sha256').update(password, 'utf8').digest('hex');
}

function parse(encoded: string): { bcrypt: string; rounds: number } | null {
  const match = BCRYPT_SHA256_FORMAT.exec(encoded);
  if (match === null) return null;
  const rounds = Number(match[2]);
  if (rounds < MIN_ROUNDS || rounds > MAX_ROUNDS) return null;
  return { bcrypt: match[1]!, rounds };
}

/**
 * Django's BCryptSHA256PasswordHasher: `bcrypt_sha256$` followed by the bcrypt string. bcryptjs is
 * pure JavaScript, so every hash runs in the worker pool, never on the event loop.
 */
export function createBcryptSha256Hasher(rounds: number, workers: BcryptWorkerPool): PasswordHasher {
  return {
    algorithm: 'bcrypt_sha256',

    async encode(password) {
      return PREFIX + (await workers.hash(bcryptInput(password), rounds)).bcrypt;
    },

    recognizes(encoded) {
      return parse(encoded) !== null;
    },

    async verify(password, encoded) {
      const parsed = parse(encoded);
      if (parsed === null) return false;
      // Recompute with the stored salt and cost, then compare whole strings as Django does.
      const recomputed = await workers.hash(bcryptInput(password), parsed.bcrypt);
      return constantTimeEqual(recomputed.bcrypt, parsed.bcrypt);
    },

    mustUpdate(encoded) {
      const parsed = parse(encoded);
      return parsed === null || parsed.rounds !== rounds;
    },

    makeDecoy() {
      let saltAndDigest = '';
      for (let index = 0; index < 53; index += 1) {
        saltAndDigest += BCRYPT_ALPHABET.charAt(randomInt(BCRYPT_ALPHABET.length));
      }
      return `${PREFIX}$2b$${String(rounds).padStart(2, '0')}$${saltAndDigest}`;
    },
  };
}
