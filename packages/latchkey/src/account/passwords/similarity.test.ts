import { describe, expect, it } from 'vitest';
import { codePointLength, exceedsMaximumLengthRatio, quickRatio } from './similarity.js';

describe('quickRatio', () => {
  // Expected values from CPython 3.11: difflib.SequenceMatcher(a=a, b=b).quick_ratio().
  it.each([
    ['testclient', 'testclient', 1],
    ['password', 'drowssap', 1],
    ['jane.doe@example.com', 'janedoe', 0.5185185185185185],
    ['abc', 'xyz', 0],
    ['aab', 'abb', 0.6666666666666666],
    ['', '', 1],
    ['correct horse', 'horse', 0.5555555555555556],
    ['pässwörd', 'passwort', 0.625],
    ['🔑🔑a', '🔑b', 0.4],
  ])('matches difflib for %j and %j', (a, b, expected) => {
    expect(quickRatio(a, b)).toBeCloseTo(expected, 12);
  });
});

describe('exceedsMaximumLengthRatio', () => {
  it("skips values Django's quick rejection skips, and only those", () => {
    expect(exceedsMaximumLengthRatio('a'.repeat(1000), 0.7, 'a')).toBe(true);
    expect(exceedsMaximumLengthRatio('a'.repeat(100), 0.7, 'abcdefghij')).toBe(true);
    expect(exceedsMaximumLengthRatio('a'.repeat(99), 0.7, 'abcdefghij')).toBe(false);
    expect(exceedsMaximumLengthRatio('alicesmith1', 0.7, 'alicesmith')).toBe(false);
  });
});

describe('codePointLength', () => {
  it('counts code points as Python does, not UTF-16 units', () => {
    expect(codePointLength('🔑🔑')).toBe(2);
    expect(codePointLength('pässwörd')).toBe(8);
  });
});
