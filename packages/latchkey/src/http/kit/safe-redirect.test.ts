import { describe, expect, it } from 'vitest';
import { isSafeRedirect } from './safe-redirect.js';

describe('next is followed only for same-site relative paths', () => {
  it('refuses every open-redirect form: other hosts and schemes, encoded or backslashed slashes, control characters', () => {
    const attacks = [
      '//evil.com',
      '///evil.com',
      '/\\evil.com',
      '\\\\evil.com',
      'http:///evil.com',
      'https://evil.com',
      'javascript:alert(1)',
      'https://app@evil.com',
      'https://app.evil.com',
      '%2F%2Fevil.com',
      '/%2F%2Fevil.com',
      '/%5cevil.com',
      'jav\tascript:alert(1)',
      '/\t/evil.com',
      '/\n/evil.com',
      'evil.com',
      '',
      ' /x',
      'x'.repeat(3000),
    ];
    for (const next of [...attacks, null, undefined, ['/x'], 42]) expect(isSafeRedirect(next), JSON.stringify(next)).toBe(false);
  });

  it('accepts legitimate relative paths', () => {
    for (const next of ['/', '/accounts/email/', '/shop?page=2&q=a%20b', '/users/ada/#profile']) expect(isSafeRedirect(next), next).toBe(true);
  });
});
