import { describe, expect, it } from 'vitest';
import { newSalt, saltIsTooShort, SALT_LENGTH } from './random-strings.js';
import { isUsablePassword, makeUnusablePassword } from './unusable-password.js';

describe('unusable passwords', () => {
  it("are marked as Django marks them: '!' and 40 random alphanumerics", () => {
    const marker = makeUnusablePassword();
    expect(marker).toMatch(/^![A-Za-z0-9]{40}$/);
    expect(makeUnusablePassword()).not.toBe(marker);
    expect(isUsablePassword(marker)).toBe(false);
  });

  it('treat a missing or empty stored value as no password', () => {
    expect(isUsablePassword(null)).toBe(false);
    expect(isUsablePassword(undefined)).toBe(false);
    expect(isUsablePassword('')).toBe(false);
    expect(isUsablePassword('pbkdf2_sha256$1500000$salt$hash')).toBe(true);
  });
});

describe('salts', () => {
  it('are 22 alphanumerics: at least 128 bits', () => {
    expect(SALT_LENGTH).toBe(22);
    const salts = new Set(Array.from({ length: 1000 }, () => newSalt()));
    expect(salts.size).toBe(1000);
    for (const salt of salts) expect(salt).toMatch(/^[A-Za-z0-9]{22}$/);
    expect(saltIsTooShort(22)).toBe(false);
    expect(saltIsTooShort(21)).toBe(true);
    expect(saltIsTooShort(12)).toBe(true);
  });
});
