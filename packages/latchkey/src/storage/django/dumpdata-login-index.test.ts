/** LoginIndex answers as the Map it replaces would, through its growth and for any text. */
import { describe, expect, it } from 'vitest';
import { LoginIndex } from './dumpdata-login-index.js';

describe('LoginIndex', () => {
  it('answers as a Map: the last id set for a login, undefined for a login never set', () => {
    const index = new LoginIndex();
    const map = new Map<string, number>();
    const logins = ['', 'ann', 'Ann', 'zoë@example.com', '山田', 'a lone surrogate \ud800', 'x'.repeat(2 << 20)];
    // Enough logins to grow the table many times over, some set twice.
    for (let n = 0; n < 50_000; n++) logins.push(`user${n % 40_000}`, `user${n}@example.com`);
    logins.forEach((login, id) => {
      index.set(login, id);
      map.set(login, id);
    });
    const asked = [...logins, 'nobody', 'user40000', 'ANN', '\ud800'];
    expect(asked.map((login) => index.get(login))).toEqual(asked.map((login) => map.get(login)));
    expect(index.get('user3')).toBe(map.get('user3'));
    expect(index.get('user3')).not.toBe(logins.indexOf('user3'));
  });

  it('tells apart logins of the same hash', () => {
    // Both hash to 1688982530 (FNV-1a), found by trying user0, user1, ...
    const index = new LoginIndex();
    index.set('user449599', 1);
    expect(index.get('user612382')).toBeUndefined();
    index.set('user612382', 2);
    expect([index.get('user449599'), index.get('user612382')]).toEqual([1, 2]);
  });
});
