/**
 * Connecting a provider account to the signed-in user (allauth's process=connect): a second way to
 * sign in to the same account, so only after a recent proof of identity. A provider account
 * already connected to another user is refused, never moved; the provider's addresses are not
 * added to the account.
 */
import { commitChange, deliverMail, type QueuedMail } from '../../account/changes.js';
import type { MailOutcome } from '../../account/emails.js';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { ConfiguredProvider } from '../directory.js';
import type { SocialAccount } from '../model.js';
import { socialAccountNotice } from '../notifications.js';
import type { ProviderProfile, ProviderTokens } from '../providers/provider.js';
import { storeProviderTokens } from '../tokens.js';
import type { SignedInRequester } from './connections.js';
import { askPreSocialLogin, socialLoginAttempt } from './pre-social-login.js';
import { profileForApp } from './provider-login.js';
import { msg } from '../../core/i18n/message.js';

export const CONNECTED_OTHER = msg('The third-party account is already connected to a different account.');

/**
 * 'connected': a new way to sign in (the owner is told by mail); 'updated': it was already this
 * user's; 'refused': the project's preSocialLogin refused it (its LatchkeyError, for the door to show).
 */
export type ConnectResult =
  | { status: 'connected'; account: SocialAccount; notification: MailOutcome }
  | { status: 'updated'; account: SocialAccount }
  | { status: 'refused'; refusal: LatchkeyError };

function connectedOther(): LatchkeyError {
  return new LatchkeyError('social_account_exists', CONNECTED_OTHER, { param: 'account', reason: 'connected_other' });
}

/**
 * Connects the provider account in `answer` to the requester. Throws 'reauthentication_required'
 * unless the requester proved who they are within the window, judged when the answer arrives: a
 * redirect connect was checked when it started too, and one that lingered at the provider past the
 * window is refused then rather than trusted on the strength of an older proof. Throws
 * LatchkeyError('social_account_exists', reason 'connected_other') when another user has it.
 */
export async function connectSocialAccount(
  deps: LatchkeyDeps,
  requester: SignedInRequester,
  configured: ConfiguredProvider,
  answer: { profile: ProviderProfile; tokens?: ProviderTokens },
  client: ClientInfo,
): Promise<ConnectResult> {
  requireRecentAuthentication(deps, requester.lastAuthenticatedAt);
  const { user } = requester;
  const providerId = configured.provider.id;
  const profile = profileForApp(configured.app, answer.profile);
  const now = deps.clock.now();
  const existing = await deps.store.socialAccounts.find(providerId, profile.uid);
  // The project's say first (preSocialLogin), whoever has the provider account.
  const connectedUser = existing && (existing.userId === user.id ? user : await deps.store.users.findById(existing.userId));
  const asked = await askPreSocialLogin(deps, socialLoginAttempt(providerId, profile, { process: 'connect', requester: user, ...(connectedUser ? { connectedUser } : {}) }));
  if (asked.kind === 'refused') return { status: 'refused', refusal: asked.refusal };
  if (existing) {
    if (existing.userId !== user.id) throw connectedOther();
    await deps.store.transaction(async (repositories) => {
      await repositories.socialAccounts.recordLogin(existing.id, profile.extraData, now);
      await storeProviderTokens(deps, repositories, existing.id, configured.app, answer.tokens);
    });
    await deps.events.emit('social_account_updated', user.id, client, { provider: providerId });
    return { status: 'updated', account: existing };
  }
  let connected: { account: SocialAccount; notice: QueuedMail | undefined };
  try {
    connected = await commitChange(deps, async (change) => {
      const { repositories } = change;
      const account = await repositories.socialAccounts.create({ userId: user.id, provider: providerId, uid: profile.uid, extraData: profile.extraData, dateJoined: now, lastLogin: now });
      await storeProviderTokens(deps, repositories, account.id, configured.app, answer.tokens);
      await change.record('social_account_added', user.id, client, { provider: providerId });
      return { account, notice: await change.queueMail(socialAccountNotice(deps, user, 'account_connected', configured.provider.name, client)) };
    });
  } catch (error) {
    // A parallel connect (or signup) of the same provider account won: whoever it was, this one is refused.
    if (isLatchkeyError(error, 'social_account_exists')) {
      const winner = await deps.store.socialAccounts.find(providerId, profile.uid);
      if (winner?.userId === user.id) return { status: 'updated', account: winner };
      throw connectedOther();
    }
    throw error;
  }
  return { status: 'connected', account: connected.account, notification: await deliverMail(deps, connected.notice) };
}
