import { describe, expect, it } from 'vitest';
import { csrfTokenMatches, maskCsrfSecret, newCsrfSecret } from './csrf-token.js';

describe('CSRF tokens in Django format', () => {
  it('masks the secret differently every time, and every mask matches', () => {
    const secret = newCsrfSecret();
    const first = maskCsrfSecret(secret);
    const second = maskCsrfSecret(secret);
    expect(first).toMatch(/^[a-zA-Z0-9]{64}$/);
    expect(first).not.toBe(second);
    expect(csrfTokenMatches(secret, first)).toBe(true);
    expect(csrfTokenMatches(secret, second)).toBe(true);
    expect(csrfTokenMatches(secret, secret)).toBe(true);
  });

  it("unmasks a token that Django itself produced", () => {
    // Django 3.2: _mask_cipher_secret('abcdefghijklmnopqrstuvwxyzABCDEF') with its random mask fixed to "A"*32.
    const secret = 'abcdefghijklmnopqrstuvwxyzABCDEF';
    const djangoToken = 'A'.repeat(32) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
    expect(csrfTokenMatches(secret, djangoToken)).toBe(true);
  });

  it("refuses another session's token, a blank, a wrong length, odd characters and non-strings", () => {
    const secret = newCsrfSecret();
    const other = maskCsrfSecret(newCsrfSecret());
    for (const token of [other, '', 'x'.repeat(63), `${'a'.repeat(63)}!`, ['a'], null, undefined, 42]) {
      expect(csrfTokenMatches(secret, token)).toBe(false);
    }
    expect(csrfTokenMatches('not-a-secret', maskCsrfSecret(secret))).toBe(false);
  });
});
