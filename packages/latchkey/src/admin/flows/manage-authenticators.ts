/**
 * What the admin does to second factors (allauth.mfa's Authenticator admin): remove one, for a
 * user who lost their phone, say. The rule of what goes with it is the user's own deactivation's
 * (removeAuthenticator: the recovery codes go too when no other authenticator remains). Checked
 * against the actor's rights here, not only by the page, and only for a user the staff member may
 * act on (access.ts, requireMayActOn: never a superuser, nor staff who hold more).
 * The user's own event (authenticator_removed, with `by: 'admin'`) is recorded against them and
 * they are told by email; the admin's change joins the audit trail against the staff member.
 */
import { commitChange, deliverMail } from '../../account/changes.js';
import type { MailOutcome } from '../../account/emails.js';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { User } from '../../account/model.js';
import type { ClientInfo } from '../../core/client.js';
import { LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { LatchkeyDeps } from '../../deps.js';
import { removeAuthenticator, removedWith } from '../../mfa/authenticators.js';
import { mfaNotice } from '../../mfa/flows/manage.js';
import type { Authenticator, AuthenticatorType } from '../../mfa/model.js';
import { requireAdminPermission, requireMayActOn } from '../access.js';

export const AUTHENTICATOR_NOT_FOUND = msg('This authenticator has been removed already.');

export interface AuthenticatorRemoval {
  user: User;
  type: AuthenticatorType;
  /** Whether the recovery codes went with it (the last authenticator app). */
  codesRemoved: boolean;
  notification: MailOutcome;
}

/** For the confirmation page: whether the user's recovery codes would go with this authenticator. */
export async function recoveryCodesGoWith(deps: Pick<LatchkeyDeps, 'store'>, authenticator: Authenticator): Promise<boolean> {
  return removedWith(authenticator, await deps.store.authenticators.listForUser(authenticator.userId)).length > 0;
}

/**
 * Removes the authenticator with this id, after a recent sign-in ('reauthentication_required'):
 * it weakens how the user signs in. 'not_found' when there is none.
 */
export async function removeAuthenticatorByAdmin(
  deps: LatchkeyDeps,
  actor: User,
  authenticatorId: number,
  client: ClientInfo,
  lastAuthenticatedAt: Date | undefined,
): Promise<AuthenticatorRemoval> {
  const granted = await requireAdminPermission(deps, actor, 'mfa.authenticator', 'delete');
  const authenticator = await deps.store.authenticators.findById(authenticatorId);
  const user = authenticator && (await deps.store.users.findById(authenticator.userId));
  if (!authenticator || !user) throw new LatchkeyError('not_found', AUTHENTICATOR_NOT_FOUND);
  await requireMayActOn(deps, granted, user);
  requireRecentAuthentication(deps, lastAuthenticatedAt);
  const { type } = authenticator;
  const { codesRemoved, notice } = await commitChange(deps, async (change) => {
    const removed = await removeAuthenticator(change.repositories, authenticator);
    if (!removed) throw new LatchkeyError('not_found', AUTHENTICATOR_NOT_FOUND);
    await change.record('authenticator_removed', user.id, client, { by: 'admin', type });
    if (removed.codesRemoved) await change.record('authenticator_removed', user.id, client, { by: 'admin', type: 'recovery_codes' });
    await change.record('admin_user_changed', actor.id, client, { target: user.id, change: 'authenticator_removed', type, ...(removed.codesRemoved ? { codes_removed: true } : {}) });
    // In the user's own language (or LANGUAGE_CODE), never the staff member's: the request is theirs, not the user's.
    const { language: _staffLanguage, ...staffClient } = client;
    const message = mfaNotice(deps, user, 'authenticator_removed_by_admin', staffClient, { type, codes_removed: removed.codesRemoved });
    return { codesRemoved: removed.codesRemoved, notice: await change.queueMail(message) };
  });
  return { user, type, codesRemoved, notification: await deliverMail(deps, notice) };
}
