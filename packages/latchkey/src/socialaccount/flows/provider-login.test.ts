/** The one reading of a sign-in's `process` that every door shares. */
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { INVALID_PROCESS, parseSignInProcess, signInProcessOf } from './provider-login.js';

describe('the process of a sign-in', () => {
  it('is a login unless the client names one, and a connect only when it says so', () => {
    expect([undefined, '', 'login', 'connect'].map(parseSignInProcess)).toEqual(['login', 'login', 'login', 'connect']);
  });

  it('is refused, never guessed, for anything else', () => {
    for (const value of ['Connect', 'connect ', 'redirect', 'steal', ['connect'], 1, null, { process: 'connect' }]) {
      expect(parseSignInProcess(value), JSON.stringify(value)).toBeUndefined();
      let refusal: unknown;
      try {
        signInProcessOf(value);
      } catch (error) {
        refusal = error;
      }
      expect(isLatchkeyError(refusal, 'invalid_input') && [refusal.message, refusal.reason, refusal.param]).toEqual([INVALID_PROCESS.id, 'invalid_choice', 'process']);
    }
  });
});
