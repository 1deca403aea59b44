import { describe, expect, it } from 'vitest';
import { remembersLogin } from './remember.js';

describe('whether a login is remembered', () => {
  it('follows ACCOUNT_SESSION_REMEMBER when the project chose, whatever the person answered', () => {
    for (const answer of [undefined, true, false]) {
      expect(remembersLogin({ ACCOUNT_SESSION_REMEMBER: true }, answer)).toBe(true);
      expect(remembersLogin({ ACCOUNT_SESSION_REMEMBER: false }, answer)).toBe(false);
    }
  });

  it('under null follows the "remember me" box where it was shown, and remembers a login that asked nothing', () => {
    expect(remembersLogin({ ACCOUNT_SESSION_REMEMBER: null }, true)).toBe(true);
    expect(remembersLogin({ ACCOUNT_SESSION_REMEMBER: null }, false)).toBe(false);
    expect(remembersLogin({ ACCOUNT_SESSION_REMEMBER: null })).toBe(true);
  });
});
