import { describe, expect, it } from 'vitest';
import { decryptSecret, encryptSecret } from './encryption.js';

const KEY = 'a-secret-key-for-tests';
const secret = new Uint8Array([1, 2, 3, 250, 0, 17]);

describe('encryptSecret / decryptSecret', () => {
  it('round-trips, and never yields the same ciphertext twice', () => {
    const first = encryptSecret(KEY, 'totp', secret, 'user:1');
    const second = encryptSecret(KEY, 'totp', secret, 'user:1');
    expect(first).not.toBe(second);
    expect(decryptSecret(KEY, 'totp', first, 'user:1')).toEqual(secret);
    expect(decryptSecret(KEY, 'totp', second, 'user:1')).toEqual(secret);
  });

  it('does not contain the plaintext in any readable form', () => {
    const text = new TextEncoder().encode('JBSWY3DPEHPK3PXP');
    const encrypted = encryptSecret(KEY, 'totp', text, 'user:1');
    expect(encrypted).not.toContain('JBSWY3DPEHPK3PXP');
    expect(Buffer.from(encrypted.slice(3), 'base64url').includes(Buffer.from(text))).toBe(false);
  });

  it('refuses another key, another purpose, another row, and any alteration', () => {
    const encrypted = encryptSecret(KEY, 'totp', secret, 'user:1');
    expect(decryptSecret('another-key', 'totp', encrypted, 'user:1')).toBeUndefined();
    expect(decryptSecret(KEY, 'recovery_codes', encrypted, 'user:1')).toBeUndefined();
    expect(decryptSecret(KEY, 'totp', encrypted, 'user:2')).toBeUndefined();
    const raw = Buffer.from(encrypted.slice(3), 'base64url');
    raw[raw.length - 1] = (raw[raw.length - 1] ?? 0) ^ 1;
    expect(decryptSecret(KEY, 'totp', `v1.${raw.toString('base64url')}`, 'user:1')).toBeUndefined();
  });

  it('refuses what is not a ciphertext at all', () => {
    for (const value of [undefined, null, 42, '', 'v1.', 'v1.AAAA', 'v2.' + 'A'.repeat(60), ['v1.x']]) {
      expect(decryptSecret(KEY, 'totp', value, 'user:1')).toBeUndefined();
    }
  });
});
