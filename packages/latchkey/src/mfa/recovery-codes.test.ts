import { describe, expect, it } from 'vitest';
import { matchRecoveryCode, newRecoverySeed, recoveryCode, recoveryCodes } from './recovery-codes.js';

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
