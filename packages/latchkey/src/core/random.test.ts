import { describe, expect, it } from 'vitest';
import { ALPHANUMERIC, randomAlphanumeric } from './random.js';

describe('randomAlphanumeric', () => {
  it('draws the requested number of characters from the 62 alphanumerics', () => {
    expect(ALPHANUMERIC).toHaveLength(62);
    expect(new Set(ALPHANUMERIC).size).toBe(62);
    expect(randomAlphanumeric(0)).toBe('');
    for (const length of [1, 22, 32, 40, 1000]) expect(randomAlphanumeric(length)).toMatch(new RegExp(`^[A-Za-z0-9]{${length}}$`));
    expect(randomAlphanumeric(32)).not.toBe(randomAlphanumeric(32));
  });

  it('favours no character', () => {
    const perCharacter = 1000;
    const sample = randomAlphanumeric(ALPHANUMERIC.length * perCharacter);
    const counts = new Map<string, number>();
    for (const character of sample) counts.set(character, (counts.get(character) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Pearson's chi-squared over 61 degrees of freedom: 61 on average for a uniform source, over
    // 150 about once in a billion runs. `byte % 62` would fail: its first 8 characters come up 5/4
    // as often as the others, which adds about 400 here.
    let chiSquared = 0;
    for (const count of counts.values()) chiSquared += (count - perCharacter) ** 2 / perCharacter;
    expect(chiSquared).toBeLessThan(150);
  });

  it('refuses a length that is not a non-negative integer', () => {
    for (const length of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => randomAlphanumeric(length)).toThrow(RangeError);
  });
});
