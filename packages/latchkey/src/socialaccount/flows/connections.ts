/**
 * A user's accounts at providers (allauth's connections): listing them, and disconnecting one,
 * which is refused when it would leave the user no way to sign in.
 */
import { commitChange, deliverMail } from '../../account/changes.js';
import type { MailOutcome } from '../../account/emails.js';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { User } from '../../account/model.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import type { ClientInfo } from '../../core/client.js';
import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { Repositories } from '../../store.js';
import type { SocialAccount } from '../model.js';
import { socialAccountNotice } from '../notifications.js';
import { msg } from '../../core/i18n/message.js';

export const NO_PASSWORD = msg('Your account has no password set up.');
export const NO_VERIFIED_EMAIL = msg('Your account has no verified email address.');

/**
 * Who asks to change how they sign in (connect or disconnect a provider account): the signed-in
 * user, and when their session last proved who they are (undefined: it never did). Adding or
 * removing a way in is a change of credentials, so the flows refuse it ('reauthentication_required')
 * unless that was within the reauthentication window, as an address change is: a session left open
 * on a shared computer must not be enough. Each door only presents the refusal.
 */
export interface SignedInRequester {
  user: User;
  lastAuthenticatedAt: Date | undefined;
}

/** Oldest first. */
export function listSocialAccounts(deps: Pick<LatchkeyDeps, 'store'>, user: User): Promise<SocialAccount[]> {
  return deps.store.socialAccounts.listForUser(user.id);
}

/**
 * Disconnects the requester's account `accountId`. Throws 'reauthentication_required' without a
 * recent proof of identity (before anything else is looked at), 'not_found' for an account that is
 * not the user's (the same answer as for one that does not exist), and 'last_login_method' when it is the
 * user's last one and they have no usable password (reason 'no_password'), or, under mandatory
 * verification, no verified address to reset one with (reason 'no_verified_email'): allauth's rules.
 * The owner is told by mail (someone signed in as them may be removing their way back in).
 */
export async function disconnectSocialAccount(
  deps: LatchkeyDeps,
  requester: SignedInRequester,
  accountId: number,
  client: ClientInfo,
): Promise<{ account: SocialAccount; notification: MailOutcome }> {
  requireRecentAuthentication(deps, requester.lastAuthenticatedAt);
  const { user } = requester;
  const notFound = new LatchkeyError('not_found', 'The account was not found.', { param: 'account', reason: 'account_not_found' });
  // The provider's name is looked up first: the directory reads the store, which a transaction's work may not.
  const chosen = (await deps.store.socialAccounts.listForUser(user.id)).find((candidate) => candidate.id === accountId);
  if (!chosen) throw notFound;
  const providerName = (await deps.providerDirectory.provider(chosen.provider))?.provider.name ?? chosen.provider;
  const { account, notice } = await commitChange(deps, async (change) => {
    const { repositories } = change;
    const accounts = await repositories.socialAccounts.listForUserLocked(user.id);
    const found = accounts.find((candidate) => candidate.id === accountId);
    if (!found) throw notFound;
    // Read again under the lock: a password removed or an address dropped meanwhile counts.
    if (accounts.length === 1) await refuseLastWayIn(deps, repositories, user.id);
    await repositories.socialAccounts.delete(found.id);
    await change.record('social_account_removed', user.id, client, { provider: found.provider });
    return { account: found, notice: await change.queueMail(socialAccountNotice(deps, user, 'account_disconnected', providerName, client)) };
  });
  return { account, notification: await deliverMail(deps, notice) };
}

async function refuseLastWayIn(deps: Pick<LatchkeyDeps, 'settings'>, repositories: Repositories, userId: number): Promise<void> {
  const current = await repositories.users.findById(userId);
  if (!current || !isUsablePassword(current.password)) throw new LatchkeyError('last_login_method', NO_PASSWORD, { param: 'account', reason: 'no_password' });
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION === 'mandatory') {
    const addresses = await repositories.emailAddresses.listForUser(userId);
    if (!addresses.some((address) => address.verified)) throw new LatchkeyError('last_login_method', NO_VERIFIED_EMAIL, { param: 'account', reason: 'no_verified_email' });
  }
}
