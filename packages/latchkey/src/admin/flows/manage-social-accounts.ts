/**
 * What the admin does to social accounts (allauth's SocialAccountAdmin): remove one, to unlink a
 * compromised provider account, say. Unlike the user's own disconnect, the admin may remove the
 * last way in (allauth's admin lets staff delete any social account): the confirmation page says
 * so first (leavesNoWayIn), and the user can still reset a password by email. Checked against the
 * actor's rights here, not only by the page, and only for a user the staff member may act on
 * (access.ts, requireMayActOn: never a superuser, nor staff who hold more). The user's own
 * event (social_account_removed, with `by: 'admin'`) is recorded against them and they are told by
 * email; the admin's change joins the audit trail against the staff member.
 */
import { commitChange, deliverMail } from '../../account/changes.js';
import type { MailOutcome } from '../../account/emails.js';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { User } from '../../account/model.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import type { ClientInfo } from '../../core/client.js';
import { LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { SocialAccount } from '../../socialaccount/model.js';
import { socialAccountNotice } from '../../socialaccount/notifications.js';
import { requireAdminPermission, requireMayActOn } from '../access.js';

export const SOCIAL_ACCOUNT_NOT_FOUND = msg('This social account has been removed already.');

export interface SocialAccountRemoval {
  user: User;
  account: SocialAccount;
  /** The provider's name as people see it (the account's provider id when no app serves it now). */
  providerName: string;
  notification: MailOutcome;
}

/** The provider's name as people see it: its app's provider's name, or the account's provider id. */
export async function socialProviderName(deps: Pick<LatchkeyDeps, 'providerDirectory'>, provider: string): Promise<string> {
  return (await deps.providerDirectory.provider(provider))?.provider.name ?? provider;
}

/**
 * For the confirmation page: whether removing the account leaves its user no way to sign in
 * but a password reset (no other social account and no usable password).
 */
export async function leavesNoWayIn(deps: Pick<LatchkeyDeps, 'store'>, account: SocialAccount, user: User): Promise<boolean> {
  const accounts = await deps.store.socialAccounts.listForUser(account.userId);
  return !accounts.some((other) => other.id !== account.id) && !isUsablePassword(user.password);
}

/**
 * Removes the social account with this id, with its tokens, after a recent sign-in
 * ('reauthentication_required'): it may take away the user's way in. 'not_found' when there is none.
 */
export async function removeSocialAccountByAdmin(
  deps: LatchkeyDeps,
  actor: User,
  accountId: number,
  client: ClientInfo,
  lastAuthenticatedAt: Date | undefined,
): Promise<SocialAccountRemoval> {
  const granted = await requireAdminPermission(deps, actor, 'socialaccount.socialaccount', 'delete');
  const account = await deps.store.socialAccounts.findById(accountId);
  const user = account && (await deps.store.users.findById(account.userId));
  if (!account || !user) throw new LatchkeyError('not_found', SOCIAL_ACCOUNT_NOT_FOUND);
  await requireMayActOn(deps, granted, user);
  requireRecentAuthentication(deps, lastAuthenticatedAt);
  const { provider } = account;
  const providerName = await socialProviderName(deps, provider);
  const notice = await commitChange(deps, async (change) => {
    // Of two parallel removals one deletes the row; the other is told it is gone.
    if (!(await change.repositories.socialAccounts.delete(account.id))) throw new LatchkeyError('not_found', SOCIAL_ACCOUNT_NOT_FOUND);
    await change.record('social_account_removed', user.id, client, { provider, by: 'admin' });
    await change.record('admin_user_changed', actor.id, client, { target: user.id, change: 'social_account_removed', provider });
    return change.queueMail(socialAccountNotice(deps, user, 'account_disconnected', providerName, client));
  });
  return { user, account, providerName, notification: await deliverMail(deps, notice) };
}
