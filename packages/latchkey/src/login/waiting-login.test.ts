import { describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { testSettings } from '../testing/latchkey.js';
import { waitingLoginEnd, waitingLoginHasEnded } from './waiting-login.js';

describe('how long a stopped login waits', () => {
  it('waits ACCOUNT_LOGIN_TIMEOUT from the moment it stopped, and has ended at that very instant', () => {
    const clock = new ManualClock('2030-01-01T00:00:00.000Z');
    const deps = { settings: { ...testSettings(), ACCOUNT_LOGIN_TIMEOUT: 300 }, clock };
    const end = waitingLoginEnd(deps);
    expect(end.toISOString()).toBe('2030-01-01T00:05:00.000Z');
    clock.advance(299_999);
    expect(waitingLoginHasEnded(deps, end)).toBe(false);
    clock.advance(1);
    expect(waitingLoginHasEnded(deps, end)).toBe(true);
  });
});
