import type { HasherName } from '../../config/choices.js';

/**
 * One algorithm in Django's encoded format (`<algorithm>$...`), with the parameters Latchkey is
 * configured to write. Hashers do no queueing of their own: the hashing service runs every call
 * of `encode` and `verify` under its concurrency bound.
 */
export interface PasswordHasher {
  readonly algorithm: HasherName;
  /** Hashes `password` with a fresh salt and the configured parameters. */
  encode(password: string): Promise<string>;
  /** Whether `encoded` is a well-formed hash of this algorithm, so that `verify` can check it. */
  recognizes(encoded: string): boolean;
  /**
   * Whether `password` matches `encoded`, computed with the parameters stored in `encoded` and
   * compared in constant time. False for a hash this hasher does not recognize.
   */
  verify(password: string, encoded: string): Promise<boolean>;
  /**
   * Django's `must_update`: the hash was made with parameters other than the configured ones, or
   * with a salt of less than 128 bits, and should be replaced on the next successful login.
   */
  mustUpdate(encoded: string): boolean;
  /**
   * A well-formed hash with the configured parameters and a random digest that no password
   * matches. Verifying against it costs exactly what verifying a real hash costs, which is what
   * unknown users and accounts without a password are checked against.
   */
  makeDecoy(): string;
}

/** The algorithm name an encoded hash starts with (`pbkdf2_sha256$...` → `pbkdf2_sha256`). */
export function algorithmOf(encoded: string): string {
  const separator = encoded.indexOf('$');
  return separator === -1 ? '' : encoded.slice(0, separator);
}

/** Standard base64 without `=` padding, as argon2's PHC strings write salts and digests. */
export function base64WithoutPadding(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replace(/=+$/, '');
}
