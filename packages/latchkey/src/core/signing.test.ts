import { describe, expect, it } from 'vitest';
import { signValue, unsignValue } from './signing.js';

const secret = 'test-secret-key';
const at = new Date('2030-01-01T00:00:00.000Z');
const later = (seconds: number) => new Date(at.getTime() + seconds * 1000);

describe('signed values', () => {
  it('round-trips within the maximum age, and not a second after', () => {
    const token = signValue(secret, 'email-confirmation', '42:ada@example.com', at);
    expect(unsignValue(secret, 'email-confirmation', token, 3 * 86400, later(3 * 86400))).toBe('42:ada@example.com');
    expect(unsignValue(secret, 'email-confirmation', token, 3 * 86400, later(3 * 86400 + 1))).toBeUndefined();
  });

  it('refuses another purpose, another key, any alteration and non-tokens', () => {
    const token = signValue(secret, 'email-confirmation', '42:ada@example.com', at);
    expect(unsignValue(secret, 'password-reset', token, 60, at)).toBeUndefined();
    expect(unsignValue('other-secret', 'email-confirmation', token, 60, at)).toBeUndefined();
    const [value, time, signature] = token.split('.') as [string, string, string];
    const forged = `${Buffer.from('43:ada@example.com').toString('base64url')}.${time}.${signature}`;
    expect(unsignValue(secret, 'email-confirmation', forged, 60, at)).toBeUndefined();
    expect(unsignValue(secret, 'email-confirmation', `${value}.${(parseInt(time, 36) + 10).toString(36)}.${signature}`, 60, at)).toBeUndefined();
    for (const junk of ['', ' ', null, undefined, ['x'], 42, `${token}x`, token.toUpperCase()]) {
      expect(unsignValue(secret, 'email-confirmation', junk, 60, at)).toBeUndefined();
    }
  });
});
