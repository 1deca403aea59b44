import { createHmac } from 'node:crypto';

/**
 * Recovery codes as django-allauth's mfa app derives them, so that a set imported from a Django
 * project (manage import-django) keeps working: the same codes, and only the unused ones.
 *
 * allauth keeps a random seed (`secrets.token_hex(40)`: 80 hexadecimal characters) and a bit mask
 * of the used codes. The HMAC key is the seed's ASCII text, not the bytes it spells. Code number i
 * is the HMAC-SHA1 of the pieces for the indexes 0 to i run together (allauth updates one MAC and
 * reads its digest after each piece), where the piece for i is i right-aligned in three spaces and
 * a comma (`"  0,"`, `"  1,"`, ...); the first 4 bytes of that digest, as an unsigned big-endian
 * number modulo 10^8, zero-padded to 8 digits, are the code. Code i is used when bit i of the mask
 * is set.
 */
export const ALLAUTH_RECOVERY_CODE_COUNT = 10;
export const ALLAUTH_RECOVERY_CODE_DIGITS = 8;

/**
 * A seed as allauth makes them: hexadecimal text (token_hex). Any ASCII text would work as the
 * key, but a seed the project's MFA adapter encrypted reads as base64 or the like: taking that as
 * the key would give codes nobody holds, so it is refused (the import then asks for the decrypt).
 */
export function isAllauthSeed(seed: string): boolean {
  return /^[0-9a-fA-F]{2,1024}$/.test(seed);
}

/** The piece of MAC input for code number `index`: Python's f"{index:3},". */
function piece(index: number): string {
  return `${String(index).padStart(3, ' ')},`;
}

/** allauth's codes of the seed whose ASCII bytes are `seed`, in index order. */
export function allauthRecoveryCodes(seed: Uint8Array): string[] {
  const codes: string[] = [];
  let input = '';
  for (let index = 0; index < ALLAUTH_RECOVERY_CODE_COUNT; index += 1) {
    // Node's Hmac cannot give a digest and go on, so each code MACs the whole input so far.
    input += piece(index);
    const digest = createHmac('sha1', seed).update(input, 'ascii').digest();
    codes.push(String(digest.readUInt32BE(0) % 10 ** ALLAUTH_RECOVERY_CODE_DIGITS).padStart(ALLAUTH_RECOVERY_CODE_DIGITS, '0'));
  }
  return codes;
}

/**
 * The indexes of the codes that allauth's `used_mask` marks as used, ascending. Bits beyond the
 * set's ten codes mean nothing to allauth and are ignored. Arithmetic instead of bit operators,
 * which would cut a mask to 32 bits.
 */
export function allauthUsedIndices(usedMask: number): number[] {
  return Array.from({ length: ALLAUTH_RECOVERY_CODE_COUNT }, (_, index) => index).filter((index) => Math.floor(usedMask / 2 ** index) % 2 === 1);
}
