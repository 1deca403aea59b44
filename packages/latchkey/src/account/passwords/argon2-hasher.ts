import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashRaw } from '@node-rs/argon2';
import type { Algorithm, Version } from '@node-rs/argon2';
import { base64WithoutPadding, type PasswordHasher } from './hasher.js';
import { newSalt, saltIsTooShort } from './random-strings.js';

export interface Argon2Parameters {
  /** KiB of memory (`m=`). Django: 102400. */
  memoryCost: number;
  /** Passes over memory (`t=`). Django: 2. */
  timeCost: number;
  /** Lanes (`p=`). Django: 8. */
  parallelism: number;
}

/** Django writes 32-byte digests (argon2-cffi's default since 21.2, RFC 9106). */
const HASH_LENGTH = 32;

// @node-rs/argon2 declares these as `const enum`s, which isolatedModules cannot read at run time;
// the numbers are the values those enums declare.
const VARIETIES = { argon2d: 0 as Algorithm, argon2i: 1 as Algorithm, argon2id: 2 as Algorithm } as const;
const VERSIONS = new Map<number, Version>([
  [16, 0],
  [19, 1],
]);
type Variety = keyof typeof VARIETIES;

interface ParsedArgon2Hash {
  variety: Variety;
  version: number;
  parameters: Argon2Parameters;
  salt: Buffer;
  digest: Buffer;
}

// Django's format is `argon2` followed by argon2's PHC string. Django before 2.1 wrote argon2i,
// and early argon2-cffi left out `v=` for version 16; both still verify, then get upgraded.
const ARGON2_FORMAT =
  /^argon2\$(argon2id|argon2i|argon2d)\$(?:v=(\d{1,3})\$)?m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,3})\$([A-Za-z0-9+/]{11,128})\$([A-Za-z0-9+/]{6,512})$/;

function parseArgon2Hash(encoded: string): ParsedArgon2Hash | null {
  const match = ARGON2_FORMAT.exec(encoded);
  if (match === null) return null;
  const [, variety, version = '16', memory, time, lanes, salt = '', digest = ''] = match;
  const versionNumber = Number(version);
  const saltBytes = Buffer.from(salt, 'base64');
  const digestBytes = Buffer.from(digest, 'base64');
  // Node's base64 decoder skips what it cannot read; a field that does not re-encode to itself
  // (a truncated hash, say) is malformed, not a hash of another length.
  if (base64WithoutPadding(saltBytes) !== salt || base64WithoutPadding(digestBytes) !== digest) return null;
  if (!VERSIONS.has(versionNumber)) return null;
  return {
    variety: variety as Variety,
    version: versionNumber,
    parameters: { memoryCost: Number(memory), timeCost: Number(time), parallelism: Number(lanes) },
    salt: saltBytes,
    digest: digestBytes,
  };
}

function formatArgon2Hash(parameters: Argon2Parameters, salt: Uint8Array, digest: Uint8Array): string {
  const { memoryCost, timeCost, parallelism } = parameters;
  return `argon2$argon2id$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$${base64WithoutPadding(salt)}$${base64WithoutPadding(digest)}`;
}

/**
 * Django's Argon2PasswordHasher (argon2id). @node-rs/argon2 computes on libuv's thread pool, so
 * the event loop stays free. The salt is Django's alphanumeric string used as raw salt bytes,
 * which is why the PHC salt field decodes to ASCII letters and digits.
 */
export function createArgon2Hasher(parameters: Argon2Parameters): PasswordHasher {
  async function computeDigest(password: string, parsed: Omit<ParsedArgon2Hash, 'digest'>, length: number): Promise<Buffer> {
    return hashRaw(password, {
      algorithm: VARIETIES[parsed.variety],
      version: VERSIONS.get(parsed.version)!,
      memoryCost: parsed.parameters.memoryCost,
      timeCost: parsed.parameters.timeCost,
      parallelism: parsed.parameters.parallelism,
      outputLen: length,
      salt: parsed.salt,
    });
  }

  return {
    algorithm: 'argon2',

    async encode(password) {
      const salt = Buffer.from(newSalt(), 'ascii');
      const digest = await computeDigest(password, { variety: 'argon2id', version: 19, parameters, salt }, HASH_LENGTH);
      return formatArgon2Hash(parameters, salt, digest);
    },

    recognizes(encoded) {
      return parseArgon2Hash(encoded) !== null;
    },

    async verify(password, encoded) {
      const parsed = parseArgon2Hash(encoded);
      if (parsed === null) return false;
      let digest: Buffer;
      try {
        digest = await computeDigest(password, parsed, parsed.digest.length);
      } catch {
        // Parameters argon2 refuses (a salt under 8 bytes, m < 8p): no password can match.
        return false;
      }
      // Both digests have the stored length, so timingSafeEqual compares every byte.
      return timingSafeEqual(digest, parsed.digest);
    },

    mustUpdate(encoded) {
      const parsed = parseArgon2Hash(encoded);
      if (parsed === null) return true;
      const stored = parsed.parameters;
      return (
        parsed.variety !== 'argon2id' ||
        parsed.version !== 19 ||
        stored.memoryCost !== parameters.memoryCost ||
        stored.timeCost !== parameters.timeCost ||
        stored.parallelism !== parameters.parallelism ||
        parsed.digest.length !== HASH_LENGTH ||
        saltIsTooShort(parsed.salt.length)
      );
    },

    makeDecoy() {
      return formatArgon2Hash(parameters, Buffer.from(newSalt(), 'ascii'), randomBytes(HASH_LENGTH));
    },
  };
}
