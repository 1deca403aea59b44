/**
 * An authenticator app, as the journeys use one: the code it shows for a secret read off the
 * site, on the real clock (the site runs on it, with MFA_TOTP_TOLERANCE 0: only the current step).
 */
import { Secret, TOTP } from 'otpauth';

/** The site's MFA_TOTP_PERIOD and MFA_TOTP_DIGITS (the defaults). */
export const PERIOD_MS = 30_000;
const DIGITS = 6;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The TOTP time step (RFC 6238's T) at `ms`. */
export const stepAt = (ms: number): number => Math.floor(ms / PERIOD_MS);

/** What an authenticator app holding `secret` (base32) shows at `timestamp`. */
export function appCode(secret: string, timestamp: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: DIGITS, period: PERIOD_MS / 1000 }).generate({ timestamp });
}

/**
 * The app's code now, with at least `marginMs` of its time step left, so that the site (which
 * accepts only the current step) still sees the same step when the form arrives. With less left,
 * waits for the next step to begin.
 */
export async function freshCode(secret: string, marginMs: number): Promise<{ code: string; step: number }> {
  const left = PERIOD_MS - (Date.now() % PERIOD_MS);
  if (left < marginMs) await sleep(left + 250);
  const now = Date.now();
  return { code: appCode(secret, now), step: stepAt(now) };
}
