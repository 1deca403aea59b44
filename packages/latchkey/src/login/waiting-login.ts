import type { LatchkeyDeps } from '../deps.js';

/**
 * How long a login stopped at a stage may wait for its answer (allauth's LOGIN_TIMEOUT): it ends
 * ACCOUNT_LOGIN_TIMEOUT seconds, on the site's clock, after the moment it stopped, and nothing the
 * person does at the stage meanwhile (a wrong code, a resent one) moves that end, because nothing
 * was proved. A signup waiting for its mailed link waits as long. Every door keeps the end with
 * the waiting login and asks here whether it has come; what a door keeps, and where, is its own.
 */

type Clocked = Pick<LatchkeyDeps, 'settings' | 'clock'>;

/** When a login stopping now stops waiting. */
export function waitingLoginEnd(deps: Clocked): Date {
  return new Date(deps.clock.now().getTime() + deps.settings.ACCOUNT_LOGIN_TIMEOUT * 1000);
}

/** Whether a waiting login that ends at `end` has ended (at that very instant, it has). */
export function waitingLoginHasEnded(deps: Pick<LatchkeyDeps, 'clock'>, end: Date): boolean {
  return end.getTime() <= deps.clock.now().getTime();
}
