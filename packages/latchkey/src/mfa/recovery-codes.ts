import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../core/crypto.js';

/**
 * Recovery codes are derived, not stored: the set is one random seed, and code number i is an
 * HMAC of i under it, read as a decimal number. The seed is stored encrypted (mfa/authenticators.ts)
 * and the used codes as their numbers only, so the database alone reveals no unused code, while
 * the user can still be shown the unused ones again. A new set is a new seed: every old code
 * stops working at once.
 */
export const RECOVERY_SEED_BYTES = 32;

export function newRecoverySeed(): Uint8Array {
  return new Uint8Array(randomBytes(RECOVERY_SEED_BYTES));
}

/**
 * Code number `index`: the first 8 bytes of HMAC-SHA256(seed, index) as an unsigned integer,
 * reduced modulo 10^digits and zero-padded. 2^64 is so much larger than 10^digits that the
 * reduction's bias is below 2^-37 for any digits up to 12.
 */
export function recoveryCode(seed: Uint8Array, index: number, digits: number): string {
  const mac = createHmac('sha256', seed).update(`latchkey-recovery-code:${index}`).digest();
  return (mac.readBigUInt64BE(0) % 10n ** BigInt(digits)).toString().padStart(digits, '0');
}

export function recoveryCodes(seed: Uint8Array, count: number, digits: number): string[] {
  return Array.from({ length: count }, (_, index) => recoveryCode(seed, index, digits));
}

/**
 * The number of the code `code` is, or undefined. Every code of the set is compared, in constant
 * time, so the time taken does not depend on which code (if any) matched. Two codes of one set
 * could in principle be equal; the first matching number is the one used.
 */
export function matchRecoveryCode(seed: Uint8Array, code: string, count: number, digits: number): number | undefined {
  if (!new RegExp(`^\\d{${digits}}$`).test(code)) return undefined;
  return matchCodeAmong(recoveryCodes(seed, count, digits), code);
}

/**
 * The number of `code` among `codes`, skipping the numbers in `skip` (codes already used), or
 * undefined. Every code is compared, in constant time, whether or not an earlier one matched and
 * whether or not it is skipped, so the time taken says nothing about which code matched or how
 * many are used. Skipping used numbers lets a code that appears twice in a set (an imported list
 * may repeat one) be used once for each time it appears, as in the set it came from.
 */
export function matchCodeAmong(codes: readonly string[], code: string, skip: ReadonlySet<number> = new Set()): number | undefined {
  if (code === '') return undefined;
  let matched: number | undefined;
  codes.forEach((candidate, index) => {
    if (constantTimeEqual(candidate, code) && !skip.has(index) && matched === undefined) matched = index;
  });
  return matched;
}
