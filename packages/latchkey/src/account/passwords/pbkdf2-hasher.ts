import { pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { constantTimeEqual } from '../../core/crypto.js';
import type { PasswordHasher } from './hasher.js';
import { newSalt, saltIsTooShort } from './random-strings.js';

const pbkdf2Async = promisify(pbkdf2);

export type Pbkdf2Digest = 'sha256' | 'sha1';

/** Django derives as many bytes as the digest gives: 32 for SHA-256, 20 for SHA-1. */
const DERIVED_KEY_LENGTH: Record<Pbkdf2Digest, number> = { sha256: 32, sha1: 20 };

/** node:crypto takes the iteration count as a signed 32-bit integer. */
const MAX_ITERATIONS = 2 ** 31 - 1;

interface ParsedPbkdf2Hash {
  iterations: number;
  salt: string;
  digest: string;
}

/**
 * Django's PBKDF2PasswordHasher (`pbkdf2_sha256`) and PBKDF2SHA1PasswordHasher (`pbkdf2_sha1`):
 * `<algorithm>$<iterations>$<salt>$<base64 digest>`, with the password and the salt string taken
 * as UTF-8 bytes. node:crypto's asynchronous pbkdf2 runs on libuv's thread pool.
 */
export function createPbkdf2Hasher(digest: Pbkdf2Digest, iterations: number): PasswordHasher {
  const algorithm = digest === 'sha256' ? 'pbkdf2_sha256' : 'pbkdf2_sha1';
  const keyLength = DERIVED_KEY_LENGTH[digest];
  // Django's salts never contain `$`; anything else goes, since very old Django accepted any salt.
  const format = new RegExp(`^${algorithm}\\$(\\d{1,10})\\$([^$]{1,128})\\$([A-Za-z0-9+/]{1,128}={0,2})$`);

  function parse(encoded: string): ParsedPbkdf2Hash | null {
    const match = format.exec(encoded);
    if (match === null) return null;
    const [, iterationCount = '', salt = '', digest = ''] = match;
    const count = Number(iterationCount);
    if (count < 1 || count > MAX_ITERATIONS) return null;
    const digestBytes = Buffer.from(digest, 'base64');
    // Exactly one digest's worth of canonical base64: anything else could never match.
    if (digestBytes.length !== keyLength || digestBytes.toString('base64') !== digest) return null;
    return { iterations: count, salt, digest };
  }

  async function derive(password: string, salt: string, count: number): Promise<string> {
    const key = await pbkdf2Async(Buffer.from(password, 'utf8'), Buffer.from(salt, 'utf8'), count, keyLength, digest);
    return key.toString('base64');
  }

  return {
    algorithm,

    async encode(password) {
      const salt = newSalt();
      return `${algorithm}$${iterations}$${salt}$${await derive(password, salt, iterations)}`;
    },

    recognizes(encoded) {
      return parse(encoded) !== null;
    },

    async verify(password, encoded) {
      const parsed = parse(encoded);
      if (parsed === null) return false;
      const derived = await derive(password, parsed.salt, parsed.iterations);
      return constantTimeEqual(derived, parsed.digest);
    },

    mustUpdate(encoded) {
      const parsed = parse(encoded);
      return parsed === null || parsed.iterations !== iterations || saltIsTooShort([...parsed.salt].length);
    },

    makeDecoy() {
      return `${algorithm}$${iterations}$${newSalt()}$${randomBytes(keyLength).toString('base64')}`;
    },
  };
}
