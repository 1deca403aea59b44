import { describe, expect, it } from 'vitest';
import { allauthRecoveryCodes, allauthUsedIndices, isAllauthSeed } from './allauth-recovery-codes.js';
import { matchCodeAmong, matchRecoveryCode, newRecoverySeed, recoveryCode, recoveryCodes } from './recovery-codes.js';

describe('recovery codes', () => {
  it('derives a fixed set of 8-digit codes from one seed', () => {
    const seed = newRecoverySeed();
    const codes = recoveryCodes(seed, 10, 8);
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^\d{8}$/);
    expect(new Set(codes).size).toBe(10);
    expect(recoveryCodes(seed, 10, 8)).toEqual(codes);
  });

  it('gives a new seed a different set', () => {
    expect(recoveryCodes(newRecoverySeed(), 10, 8)).not.toEqual(recoveryCodes(newRecoverySeed(), 10, 8));
  });

  it('is HMAC-SHA256 of the index, reduced to the digits (a fixed vector)', () => {
    const seed = new Uint8Array(32).fill(7);
    // Computed independently: python3 -c "import hmac,hashlib; m=hmac.new(bytes([7]*32), b'latchkey-recovery-code:0', hashlib.sha256).digest(); print(str(int.from_bytes(m[:8],'big') % 10**8).zfill(8))"
    expect(recoveryCode(seed, 0, 8)).toBe(KNOWN_CODE_0);
  });

  it('matches a code to its number and refuses everything else', () => {
    const seed = newRecoverySeed();
    const codes = recoveryCodes(seed, 10, 8);
    expect(matchRecoveryCode(seed, codes[3]!, 10, 8)).toBe(3);
    expect(matchRecoveryCode(seed, codes[9]!, 10, 8)).toBe(9);
    expect(matchRecoveryCode(newRecoverySeed(), codes[3]!, 10, 8)).toBeUndefined();
    for (const code of ['', '1234567', '123456789', 'abcdefgh', ` ${codes[0]!}`]) {
      expect(matchRecoveryCode(seed, code, 10, 8)).toBeUndefined();
    }
  });
});

const KNOWN_CODE_0 = '06451747';

describe('matchCodeAmong', () => {
  it('finds the first matching code that is not skipped', () => {
    const codes = ['11111111', '22222222', '11111111'];
    expect(matchCodeAmong(codes, '22222222')).toBe(1);
    expect(matchCodeAmong(codes, '11111111')).toBe(0);
    expect(matchCodeAmong(codes, '11111111', new Set([0]))).toBe(2);
    expect(matchCodeAmong(codes, '11111111', new Set([0, 2]))).toBeUndefined();
    expect(matchCodeAmong(codes, '33333333')).toBeUndefined();
    expect(matchCodeAmong(['', 'abc'], '')).toBeUndefined();
  });
});

/**
 * django-allauth's recovery codes, computed by Python's hmac and hashlib exactly as allauth.mfa
 * describes its derivation (/usr/bin/python3):
 *
 *   import hmac, hashlib
 *   def codes(seed):
 *       h = hmac.new(key=seed.encode("ascii"), msg=None, digestmod=hashlib.sha1)
 *       out = []
 *       for i in range(10):
 *           h.update(f"{i:3},".encode("ascii"))
 *           out.append(f"{int.from_bytes(h.digest()[:4], 'big') % 10**8:08d}")
 *       return out
 */
const ALLAUTH_VECTORS: [seed: string, codes: string[]][] = [
  [
    '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    ['64942586', '03959085', '07990366', '16418492', '08962862', '26762693', '03257366', '85808163', '85026242', '60612046'],
  ],
  [
    '5f0c8e2a9b7d4c1e3a6f8b2d0e9c7a5b1d3f6e8a0c2b4d6f8e1a3c5b7d9f0e2a4c6b8d1f3e5a7c9b',
    ['82160335', '85966261', '94330147', '77544303', '31297809', '85456773', '00122432', '32489153', '46617306', '92901258'],
  ],
];

describe("django-allauth's recovery codes", () => {
  it.each(ALLAUTH_VECTORS)('derives the codes Python derives from seed %s', (seed, codes) => {
    expect(allauthRecoveryCodes(new Uint8Array(Buffer.from(seed, 'ascii')))).toEqual(codes);
  });

  it('reads the used codes from the bits of used_mask, ignoring bits past the tenth code', () => {
    expect(allauthUsedIndices(0)).toEqual([]);
    expect(allauthUsedIndices(0b1000000101)).toEqual([0, 2, 9]);
    expect(allauthUsedIndices(1023)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(allauthUsedIndices(2 ** 40 + 2 ** 10 + 2)).toEqual([1]);
  });

  it('takes hexadecimal seeds only, as allauth makes them', () => {
    expect(isAllauthSeed(ALLAUTH_VECTORS[0]![0])).toBe(true);
    for (const seed of ['', 'with space', 'sééd', 'tab\t', 'enc:YWJj', 'a'.repeat(1025)]) expect(isAllauthSeed(seed), seed).toBe(false);
  });
});
