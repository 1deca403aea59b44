/**
 * Signing in with a provider, for every door: start (where to send the browser, and the state to
 * keep) and finish (the provider's answer to a login, through the same login pipeline as a
 * password, so that email verification and MFA apply alike).
 *
 * The account is found by (provider, uid) alone, never by email: an address a provider reports is
 * not proof that the person owns the local account that has it. A new person signs up
 * automatically only when the address is free; otherwise nothing is linked or logged into.
 */
import type { User } from '../../account/model.js';
import { createUser, emailInUse } from '../../account/users.js';
import { sendEmailConfirmation } from '../../account/email-confirmation.js';
import type { ClientInfo } from '../../core/client.js';
import { randomToken, sha256Hex } from '../../core/crypto.js';
import { isLatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import { beginLogin, type LoginResult } from '../../login/pipeline.js';
import type { FirstFactor } from '../../login/proofs.js';
import { emailVerificationFor, type LoginContext } from '../../login/stages.js';
import type { SocialLogin } from '../adapter.js';
import type { PendingAuthorization, ProviderProfile, RedirectProvider } from '../providers/provider.js';
import { availableUsername } from '../usernames.js';

/** How long a started sign-in may take at the provider before its state is refused. */
export const SIGN_IN_STATE_SECONDS = 10 * 60;

/** What a started sign-in keeps, server-side, until its callback. */
export interface SignInState {
  /** The provider's id (the URL segment): a callback at another provider's URL is refused. */
  provider: string;
  process: 'login';
  /** Where to go after signing in: a path on this site, already checked. */
  next: string;
  pending: PendingAuthorization;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

export async function startProviderLogin(
  deps: Pick<LatchkeyDeps, 'clock'>,
  provider: RedirectProvider,
  input: { redirectUri: string; next: string },
): Promise<{ url: URL; state: string; record: SignInState }> {
  const state = randomToken(32);
  const { url, pending } = await provider.authorizationUrl({ redirectUri: input.redirectUri, state });
  const record: SignInState = { provider: provider.id, process: 'login', next: input.next, pending, expiresAt: deps.clock.now().getTime() + SIGN_IN_STATE_SECONDS * 1000 };
  return { url, state, record };
}

/**
 * What came of a provider's answer: the login pipeline's result (for an existing account or one
 * just signed up), or a refusal the door explains: signup is closed, or the address the provider
 * gave already has an account here (sign in to it first), or the provider gave no address.
 */
export type ProviderLoginResult =
  | { status: 'login'; login: LoginResult; signedUp: boolean }
  | { status: 'signup_closed' }
  | { status: 'email_taken'; email: string }
  | { status: 'email_required' };

/**
 * Whether a state may be used now, once: it must be the provider's, unexpired, and claimed for the
 * first time (a replayed callback, even in a parallel request, is refused).
 */
export async function claimSignInState(deps: Pick<LatchkeyDeps, 'clock' | 'oneTimeClaims'>, providerId: string, state: string, record: SignInState | undefined): Promise<boolean> {
  if (!record || record.provider !== providerId || record.expiresAt <= deps.clock.now().getTime()) return false;
  return deps.oneTimeClaims.claim(`socialaccount-state:${sha256Hex(state)}`, SIGN_IN_STATE_SECONDS, deps.clock.now());
}

export async function finishProviderLogin(deps: LatchkeyDeps, providerId: string, profile: ProviderProfile, context: LoginContext): Promise<ProviderLoginResult> {
  const firstFactor: FirstFactor = { kind: 'socialaccount', provider: providerId, uid: profile.uid };
  const existing = await deps.store.socialAccounts.find(providerId, profile.uid);
  if (existing) {
    await deps.store.socialAccounts.recordLogin(existing.id, profile.extraData, deps.clock.now());
    await deps.events.emit('social_account_updated', existing.userId, context.client, { provider: providerId });
    const user = await deps.store.users.findById(existing.userId);
    // The account went with its user (a cascade); a login racing a deletion finds nobody.
    if (!user) return { status: 'login', login: { status: 'ended' }, signedUp: false };
    return { status: 'login', login: await beginLogin(deps, user, firstFactor, context), signedUp: false };
  }
  return signUp(deps, providerId, profile, firstFactor, context);
}

async function signUp(deps: LatchkeyDeps, providerId: string, profile: ProviderProfile, firstFactor: FirstFactor, context: LoginContext): Promise<ProviderLoginResult> {
  const login: SocialLogin = { provider: providerId, uid: profile.uid, data: profile.data };
  if (!(await deps.socialAdapter.isOpenForSignup(login))) return { status: 'signup_closed' };
  const fields = await deps.socialAdapter.populateUser(login);
  const email = (profile.emails.find((address) => address.primary) ?? profile.emails[0])?.email ?? fields.email;
  if (email === '') return { status: 'email_required' };
  // The social signup form (choosing another address) is still to come: until then a signup the
  // settings want asked, or one whose address is taken, is refused with the reason.
  if (!deps.settings.SOCIALACCOUNT_AUTO_SIGNUP || (await emailInUse(deps, email))) return { status: 'email_taken', email };
  const verified = profile.emails.some((address) => address.email.toLowerCase() === email.toLowerCase() && address.verified);
  const username = deps.settings.USERNAME_TYPE === 'username' ? await availableUsername(deps.store.users, [fields.username ?? '', email.split('@')[0]!]) : undefined;
  let user: User;
  try {
    user = await createUser(
      deps,
      { ...(username === undefined ? {} : { username }), email, name: fields.name, password: null, emailVerified: verified },
      async (repositories, created) => {
        await repositories.socialAccounts.create({ userId: created.id, provider: providerId, uid: profile.uid, extraData: profile.extraData, dateJoined: deps.clock.now(), lastLogin: deps.clock.now() });
      },
    );
  } catch (error) {
    // Another sign-up took the address meanwhile (the database's unique index decided).
    if (isLatchkeyError(error, 'email_taken')) return { status: 'email_taken', email };
    throw error;
  }
  await deps.events.emit('user_signed_up', user.id, context.client, { provider: providerId });
  await deps.events.emit('social_account_added', user.id, context.client, { provider: providerId });
  if (!verified && emailVerificationFor(deps.settings, firstFactor) === 'optional') await confirmAddress(deps, user, email, context.client);
  return { status: 'login', login: await beginLogin(deps, user, firstFactor, context), signedUp: true };
}

/** Under optional verification an unverified address is sent its link, as a local signup's is; the stages do it under mandatory. */
async function confirmAddress(deps: LatchkeyDeps, user: User, email: string, client: ClientInfo): Promise<void> {
  const address = await deps.store.emailAddresses.findForUser(user.id, email);
  if (!address) return;
  try {
    await sendEmailConfirmation(deps, address, client);
  } catch (error) {
    if (!isLatchkeyError(error, 'mail_failed')) throw error;
  }
}

