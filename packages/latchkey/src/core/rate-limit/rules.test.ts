import { describe, expect, it } from 'vitest';
import { BASE_DEFAULTS } from '../../config/defaults.js';
import { LatchkeyError } from '../errors.js';
import { parseRateLimitRules } from './rules.js';

describe('parseRateLimitRules', () => {
  it('reads count, period with its multiplier, and scope', () => {
    expect(parseRateLimitRules('10/m/ip,5/5m/key')).toEqual([
      { limit: 10, windowSeconds: 60, scope: 'ip' },
      { limit: 5, windowSeconds: 300, scope: 'key' },
    ]);
    expect(parseRateLimitRules('1/s/user, 2/h , 3/2d/key')).toEqual([
      { limit: 1, windowSeconds: 1, scope: 'user' },
      { limit: 2, windowSeconds: 3600, scope: 'ip' },
      { limit: 3, windowSeconds: 172800, scope: 'key' },
    ]);
  });

  it('defaults the scope to ip, as allauth does', () => {
    expect(parseRateLimitRules('20/m')).toEqual([{ limit: 20, windowSeconds: 60, scope: 'ip' }]);
  });

  it('reads every default rule', () => {
    const defaults = BASE_DEFAULTS.ACCOUNT_RATE_LIMITS;
    if (defaults === false) throw new Error('rate limits must be on by default');
    for (const text of Object.values(defaults)) {
      expect(parseRateLimitRules(text).length).toBeGreaterThan(0);
    }
    expect(parseRateLimitRules(defaults.confirm_email ?? '')).toEqual([{ limit: 1, windowSeconds: 180, scope: 'key' }]);
  });

  it.each(['', ' ', '10', '10/m/email', '10/w', 'm/10', '10/m,', ',10/m', '10/m/ip/key', '-1/m', '1.5/m', '10/0m', `10/${'9'.repeat(20)}d`, `${'9'.repeat(20)}/m`])(
    'refuses %j with configuration_invalid naming the setting',
    (text) => {
      let error: unknown;
      try {
        parseRateLimitRules(text);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(LatchkeyError);
      expect((error as LatchkeyError).code).toBe('configuration_invalid');
      expect((error as LatchkeyError).message).toContain('ACCOUNT_RATE_LIMITS');
    },
  );

  it('reads the ip+key scope, which counts a key per IP', () => {
    expect(parseRateLimitRules('5/5m/ip+key')).toEqual([{ limit: 5, windowSeconds: 300, scope: 'ip+key' }]);
    expect(() => parseRateLimitRules('5/5m/key+ip')).toThrow(LatchkeyError);
  });

  it('accepts spaces around rules and a zero count, which refuses every attempt', () => {
    expect(parseRateLimitRules(' 3/m/key , 4/h/user ')).toHaveLength(2);
    expect(parseRateLimitRules('0/m')).toEqual([{ limit: 0, windowSeconds: 60, scope: 'ip' }]);
  });
});
