/**
 * The project's say over a provider's answer before Latchkey acts on it (SocialAccountAdapter's
 * preSocialLogin, allauth's pre_social_login), asked by the login and the connect flows alike,
 * whichever door the answer came through.
 */
import type { User } from '../../account/model.js';
import { isLatchkeyError, type LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { SocialLoginAttempt, SocialLoginUsers } from '../adapter.js';
import type { ProviderProfile } from '../providers/provider.js';

/** What the project decided: go on as usual, refuse (its LatchkeyError, for the door to show), or connect to an existing user. */
export type PreSocialLoginAnswer = { kind: 'go_on' } | { kind: 'refused'; refusal: LatchkeyError } | { kind: 'connect_to'; user: User };

/** The attempt as the hook sees it, from the provider's (app-adjusted) profile. */
export function socialLoginAttempt(providerId: string, profile: ProviderProfile, who: Pick<SocialLoginAttempt, 'process' | 'connectedUser' | 'requester'>): SocialLoginAttempt {
  return {
    provider: providerId,
    uid: profile.uid,
    data: profile.data,
    extraData: profile.extraData,
    emails: profile.emails.map(({ email, verified, primary }) => ({ email, verified, primary })),
    ...who,
  };
}

function usersFor(deps: Pick<LatchkeyDeps, 'store'>): SocialLoginUsers {
  return {
    async withVerifiedEmail(email) {
      const address = typeof email === 'string' ? await deps.store.emailAddresses.findVerified(email) : undefined;
      return address && (await deps.store.users.findById(address.userId));
    },
    byId: (id) => (Number.isSafeInteger(id) ? deps.store.users.findById(id) : Promise.resolve(undefined)),
  };
}

/**
 * Asks preSocialLogin. A LatchkeyError it throws is its refusal; anything else it throws is a
 * failure like any other. `{ connectTo }` is taken only where it means something, at a login
 * with a provider account nobody has, and only for a user that exists: anything else is the
 * project's mistake, said in an Error that names the hook, rather than a sign-in as somebody
 * other than the one intended.
 */
export async function askPreSocialLogin(deps: Pick<LatchkeyDeps, 'socialAdapter' | 'store'>, attempt: SocialLoginAttempt): Promise<PreSocialLoginAnswer> {
  let decision: unknown;
  try {
    decision = await deps.socialAdapter.preSocialLogin(attempt, usersFor(deps));
  } catch (error) {
    if (isLatchkeyError(error)) return { kind: 'refused', refusal: error };
    throw error;
  }
  if (decision === undefined || decision === null) return { kind: 'go_on' };
  const target = typeof decision === 'object' ? (decision as { connectTo?: { id?: unknown } }).connectTo : undefined;
  if (typeof target?.id !== 'number') throw new TypeError('SocialAccountAdapter.preSocialLogin must return nothing, or { connectTo: user }.');
  if (attempt.process !== 'login' || attempt.connectedUser !== undefined) {
    throw new TypeError('SocialAccountAdapter.preSocialLogin: { connectTo } is for a login with a provider account nobody has yet, not a connect or a returning person.');
  }
  const user = await deps.store.users.findById(target.id);
  if (!user) throw new TypeError(`SocialAccountAdapter.preSocialLogin: { connectTo } names user ${target.id}, who does not exist.`);
  return { kind: 'connect_to', user };
}
