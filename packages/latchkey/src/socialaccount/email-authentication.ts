/**
 * Signing in to an existing local account by the address a provider vouches for (allauth's
 * SOCIALACCOUNT_EMAIL_AUTHENTICATION). Off by default: an address is only as trustworthy as the
 * provider that reports it, so the project turns it on for the providers it trusts, globally or
 * per provider (`EMAIL_AUTHENTICATION`) or per app (`settings.email_authentication`).
 */
import type { User } from '../account/model.js';
import { voidOtherClaims } from '../account/email-confirmation.js';
import { makeUnusablePassword } from '../account/passwords/index.js';
import type { LatchkeyDeps } from '../deps.js';
import type { ProviderApp } from './apps.js';
import type { ProviderProfile } from './providers/provider.js';

export function emailAuthenticationFor(deps: Pick<LatchkeyDeps, 'settings'>, app: Pick<ProviderApp, 'settings'>): boolean {
  const perApp = app.settings.email_authentication;
  return typeof perApp === 'boolean' ? perApp : deps.settings.SOCIALACCOUNT_EMAIL_AUTHENTICATION;
}

/** The local account one of the provider's verified addresses belongs to, preferring an account that verified it too. */
export interface EmailMatch {
  user: User;
  /** The matching address row; undefined when only the user's email column had it. */
  addressId: number | undefined;
  addressVerified: boolean;
}

export async function userByProviderEmail(deps: Pick<LatchkeyDeps, 'store'>, profile: ProviderProfile): Promise<EmailMatch | undefined> {
  for (const { email, verified } of profile.emails) {
    // An address the provider does not vouch for proves nothing: never a way into an account.
    if (!verified) continue;
    const rows = await deps.store.emailAddresses.listByEmail(email);
    const row = rows.find((address) => address.verified) ?? rows[0];
    const user = row ? await deps.store.users.findById(row.userId) : await deps.store.users.findByEmail(email);
    if (user) return { user, addressId: row?.id, addressVerified: row?.verified ?? false };
  }
  return undefined;
}

/**
 * Against pre-account hijacking: someone may have signed up with the victim's address before the
 * victim, set a password and never verified it. When the real owner then signs in through a
 * provider that vouches for the address, the stranger's password is made unusable, every session
 * of the account ends, and the address counts as verified (the provider vouched for it), in one
 * transaction.
 */
export async function wipePassword(deps: Pick<LatchkeyDeps, 'store'>, match: EmailMatch): Promise<void> {
  await deps.store.transaction(async (repositories) => {
    await repositories.users.update(match.user.id, { password: makeUnusablePassword() });
    await repositories.sessions.deleteForUser(match.user.id);
    const verified = match.addressId === undefined ? undefined : await repositories.emailAddresses.markVerified(match.addressId);
    // As any way an address gets verified: other accounts' unverified claims to it are void.
    if (verified) await voidOtherClaims(repositories, verified);
  });
}
