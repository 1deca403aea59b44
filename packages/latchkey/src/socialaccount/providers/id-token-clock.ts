/**
 * The clock rule for ID tokens, whichever provider signs them (OpenID Connect and the named
 * providers built on it, Apple): how far the provider's clock may run from the site's, and the
 * check of `iat` that oauth4webapi and jose leave out (docs/social.md, "ID tokens").
 */
import type { Clock } from '../../core/clock.js';
import { ProviderError } from './provider.js';

/**
 * How far, in seconds, the provider's clock may be from the site's for an ID token's timestamps:
 * its exp may have just passed, its nbf and iat may be just ahead. oauth4webapi's own default,
 * given to jose too, so that both ways an ID token arrives (the callback, a token login) agree.
 */
export const ID_TOKEN_CLOCK_TOLERANCE_SECONDS = 30;

/**
 * Refuses an ID token dated further in the future than the tolerance, on the site's clock: such a
 * token was minted ahead of time (a forged or replayed one), and would pass for fresh long after.
 * The libraries only check that iat is a number (oauth4webapi also refuses one over an hour old).
 */
export function refuseIssuedInTheFuture(providerId: string, issuedAt: number | undefined, clock: Clock): void {
  const now = Math.floor(clock.now().getTime() / 1000);
  if (issuedAt !== undefined && issuedAt > now + ID_TOKEN_CLOCK_TOLERANCE_SECONDS) {
    throw new ProviderError(
      'failed',
      `${providerId}: the ID token's "iat" (issued at) is ${issuedAt - now} s in the future, more than the ${ID_TOKEN_CLOCK_TOLERANCE_SECONDS} s the clocks may differ by`,
    );
  }
}
