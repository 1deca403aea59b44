import { randomInt } from 'node:crypto';

/** Django's RANDOM_STRING_CHARS: the 62 ASCII letters and digits. */
export const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * A string of `length` characters drawn uniformly and independently from the 62 alphanumerics by
 * the CSPRNG, as Django's get_random_string. `randomInt` rejects out-of-range values instead of
 * taking a modulo, so no character is favoured (62 does not divide 256: `byte % 62` would make
 * the first eight characters more likely than the rest).
 */
export function randomAlphanumeric(length: number): string {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`The length must be a non-negative integer, not ${length}.`);
  let result = '';
  for (let index = 0; index < length; index += 1) {
    result += ALPHANUMERIC.charAt(randomInt(ALPHANUMERIC.length));
  }
  return result;
}
