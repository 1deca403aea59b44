import { ALPHANUMERIC, randomAlphanumeric } from '../../core/random.js';

/** Django's BasePasswordHasher.salt_entropy: every new salt carries at least this many bits. */
export const SALT_ENTROPY_BITS = 128;

const BITS_PER_ALPHANUMERIC = Math.log2(ALPHANUMERIC.length);

/** 22 characters: the fewest alphanumerics that carry 128 bits (22 × 5.95 = 131). */
export const SALT_LENGTH = Math.ceil(SALT_ENTROPY_BITS / BITS_PER_ALPHANUMERIC);

/** A new salt as Django makes it: alphanumeric, at least 128 bits of entropy. */
export function newSalt(): string {
  return randomAlphanumeric(SALT_LENGTH);
}

/**
 * Django's must_update_salt: a stored salt of `length` characters is too weak when, counted as
 * alphanumerics, it carries fewer than 128 bits. Django before 3.1 made 12-character salts; hashes
 * with those are rehashed on the next successful login.
 */
export function saltIsTooShort(length: number): boolean {
  return length * BITS_PER_ALPHANUMERIC < SALT_ENTROPY_BITS;
}
