import { constantTimeEqual, keyedHash } from '../core/crypto.js';
import { signValue, unsignValue } from '../core/signing.js';
import type { LatchkeyDeps } from '../deps.js';
import type { Authenticator } from './model.js';
import type { User } from '../account/model.js';

/**
 * "Trust this browser" (MFA_TRUST_ENABLED, off by default): after a correct code the browser may
 * keep a signed cookie for MFA_TRUST_COOKIE_AGE that lets later logins of the same user skip the
 * code there (never the password). Nothing is stored on the server; the cookie carries the user
 * and a fingerprint of what protects the account now: the password hash and the authenticators.
 * Changing the password, or adding, removing or regenerating a second factor, changes the
 * fingerprint, so every browser trusted before the change must give a code again.
 */
export const MFA_TRUST_COOKIE = 'latchkey_mfa_trusted';
const PURPOSE = 'mfa-trust';

function fingerprint(secretKey: string, user: User, authenticators: readonly Authenticator[]): string {
  const factors = authenticators
    .map((authenticator) => `${authenticator.id}:${authenticator.type}:${authenticator.createdAt.toISOString()}`)
    .sort()
    .join(',');
  return keyedHash(secretKey, 'mfa-trust-fingerprint', `${user.id}|${user.password}|${factors}`);
}

/** The cookie value that trusts this browser for `user` from now on. */
export function trustToken(deps: Pick<LatchkeyDeps, 'settings' | 'clock'>, user: User, authenticators: readonly Authenticator[]): string {
  const value = JSON.stringify({ u: user.id, f: fingerprint(deps.settings.SECRET_KEY, user, authenticators) });
  return signValue(deps.settings.SECRET_KEY, PURPOSE, value, deps.clock.now());
}

/** Whether `token` (the cookie, as sent) trusts this browser for `user` with the account as it is now. */
export function isTrustedBrowser(deps: Pick<LatchkeyDeps, 'settings' | 'clock'>, user: User, authenticators: readonly Authenticator[], token: unknown): boolean {
  if (!deps.settings.MFA_TRUST_ENABLED) return false;
  const value = unsignValue(deps.settings.SECRET_KEY, PURPOSE, token, deps.settings.MFA_TRUST_COOKIE_AGE, deps.clock.now());
  if (value === undefined) return false;
  let claims: unknown;
  try {
    claims = JSON.parse(value);
  } catch {
    return false;
  }
  if (typeof claims !== 'object' || claims === null) return false;
  const { u, f } = claims as { u?: unknown; f?: unknown };
  return u === user.id && typeof f === 'string' && constantTimeEqual(f, fingerprint(deps.settings.SECRET_KEY, user, authenticators));
}
