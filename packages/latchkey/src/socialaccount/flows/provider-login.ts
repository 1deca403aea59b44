/**
 * Signing in with a provider, for every door: start (where to send the browser, and the state to
 * keep) and finish (the provider's answer to a login, through the same login pipeline as a
 * password, so that email verification and MFA apply alike).
 *
 * The account is found by (provider, uid), never by email: an address a provider reports is not
 * proof that the person owns the local account that has it. The one exception is the project's to
 * make (SOCIALACCOUNT_EMAIL_AUTHENTICATION, for providers it trusts), and then only for an
 * address the provider vouches for. A new person signs up automatically only when the address is
 * free and the project's cleanEmail accepts it; otherwise the social signup form asks.
 */
import { commitChange, deliverMail, type QueuedMail } from '../../account/changes.js';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { User } from '../../account/model.js';
import { randomToken, sha256Hex } from '../../core/crypto.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import { beginLogin, type LoginResult } from '../../login/pipeline.js';
import type { FirstFactor } from '../../login/proofs.js';
import type { LoginContext } from '../../login/stages.js';
import type { ProviderApp } from '../apps.js';
import type { ConfiguredProvider } from '../directory.js';
import { emailAuthenticationFor, userByProviderEmail, wipePassword, type EmailMatch } from '../email-authentication.js';
import type { PendingAuthorization, ProviderProfile, ProviderTokens, SignInProvider } from '../providers/provider.js';
import { socialAccountNotice } from '../notifications.js';
import { storeProviderTokens } from '../tokens.js';
import type { SignedInRequester } from './connections.js';
import { askPreSocialLogin, socialLoginAttempt } from './pre-social-login.js';
import { providerFirstFactor, signUpFromProvider } from './provider-signup.js';
import type { ProviderLoginResult } from './results.js';
import { msg } from '../../core/i18n/message.js';

/** How long a started sign-in may take at the provider before its state is refused. */
export const SIGN_IN_STATE_SECONDS = 10 * 60;

/** 'login' signs in (or up); 'connect' adds the provider account to the signed-in user. */
export type SignInProcess = 'login' | 'connect';

export const INVALID_PROCESS = msg('Select a valid choice.');

/**
 * The `process` a client asks for, as every door reads it: 'login' when it names none, undefined
 * for anything but 'login' or 'connect'. An unknown process is refused rather than guessed: a
 * client that meant to connect, misspelt, must not be signed in as whoever the provider names.
 */
export function parseSignInProcess(value: unknown): SignInProcess | undefined {
  if (value === undefined || value === '' || value === 'login') return 'login';
  return value === 'connect' ? 'connect' : undefined;
}

/** As parseSignInProcess; an unknown process throws LatchkeyError('invalid_input', reason 'invalid_choice', param 'process'). */
export function signInProcessOf(value: unknown): SignInProcess {
  const process = parseSignInProcess(value);
  if (process === undefined) throw new LatchkeyError('invalid_input', INVALID_PROCESS, { param: 'process', reason: 'invalid_choice' });
  return process;
}

/** What a started sign-in keeps, server-side, until its callback. */
export interface SignInState {
  /** The provider's id (the URL segment): a callback at another provider's URL is refused. */
  provider: string;
  process: SignInProcess;
  /** Where to go after signing in: a path on this site, already checked. */
  next: string;
  /** A connect's user: the callback must find the same user signed in. */
  userId?: number;
  /** Set when a single-page app started it (headless): the frontend URL the browser returns to. */
  frontendUrl?: string;
  pending: PendingAuthorization;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** What a sign-in is for: a login, or a connect for the signed-in user who asks. */
export type StartProcess = { process: 'login' } | { process: 'connect'; requester: SignedInRequester };

export type StartInput = StartProcess & {
  redirectUri: string;
  next: string;
  frontendUrl?: string;
};

/**
 * Starts a sign-in: where to send the browser, and the state to keep for the callback. A connect
 * adds a way to sign in to the account: without a recent proof of identity it is refused
 * ('reauthentication_required') here, before the browser goes anywhere, and connectSocialAccount
 * holds the callback to the same rule.
 */
export async function startProviderLogin(deps: Pick<LatchkeyDeps, 'clock'>, provider: SignInProvider, input: StartInput): Promise<{ url: URL; state: string; record: SignInState }> {
  if (input.process === 'connect') requireRecentAuthentication(deps, input.requester.lastAuthenticatedAt);
  const state = randomToken(32);
  const { url, pending } = await provider.authorizationUrl({ redirectUri: input.redirectUri, state });
  const record: SignInState = {
    provider: provider.id,
    process: input.process,
    next: input.next,
    ...(input.process === 'connect' ? { userId: input.requester.user.id } : {}),
    ...(input.frontendUrl === undefined ? {} : { frontendUrl: input.frontendUrl }),
    pending,
    expiresAt: deps.clock.now().getTime() + SIGN_IN_STATE_SECONDS * 1000,
  };
  return { url, state, record };
}

/**
 * Whether a state may be used now, once: it must be the provider's, unexpired, and claimed for the
 * first time (a replayed callback, even in a parallel request, is refused).
 */
export async function claimSignInState(deps: Pick<LatchkeyDeps, 'clock' | 'oneTimeClaims'>, providerId: string, state: string, record: SignInState | undefined): Promise<boolean> {
  if (!record || record.provider !== providerId || record.expiresAt <= deps.clock.now().getTime()) return false;
  return deps.oneTimeClaims.claim(`socialaccount-state:${sha256Hex(state)}`, SIGN_IN_STATE_SECONDS, deps.clock.now());
}

/** The profile as the app's settings say to read it: VERIFIED_EMAIL makes the provider's addresses count as verified. */
export function profileForApp(app: Pick<ProviderApp, 'settings'>, profile: ProviderProfile): ProviderProfile {
  if (app.settings.verified_email !== true) return profile;
  return { ...profile, emails: profile.emails.map((address) => ({ ...address, verified: true })) };
}

export async function finishProviderLogin(
  deps: LatchkeyDeps,
  configured: ConfiguredProvider,
  answer: { profile: ProviderProfile; tokens?: ProviderTokens },
  next: string,
  context: LoginContext,
): Promise<ProviderLoginResult> {
  const providerId = configured.provider.id;
  const profile = profileForApp(configured.app, answer.profile);
  const firstFactor = providerFirstFactor(providerId, profile);
  const existing = await deps.store.socialAccounts.find(providerId, profile.uid);
  // The project's say first (preSocialLogin): before anything is recorded, connected or created.
  const connectedUser = existing && (await deps.store.users.findById(existing.userId));
  const asked = await askPreSocialLogin(deps, socialLoginAttempt(providerId, profile, { process: 'login', ...(connectedUser ? { connectedUser } : {}) }));
  if (asked.kind === 'refused') return { status: 'refused', refusal: asked.refusal };
  if (asked.kind === 'connect_to') return connectAndSignIn(deps, configured, asked.user, { ...answer, profile }, firstFactor, context);
  if (existing) {
    await deps.store.transaction(async (repositories) => {
      await repositories.socialAccounts.recordLogin(existing.id, profile.extraData, deps.clock.now());
      await storeProviderTokens(deps, repositories, existing.id, configured.app, answer.tokens);
    });
    await deps.events.emit('social_account_updated', existing.userId, context.client, { provider: providerId });
    const user = await deps.store.users.findById(existing.userId);
    // The account went with its user (a cascade); a login racing a deletion finds nobody.
    if (!user) return { status: 'login', login: { status: 'ended' } };
    return { status: 'login', login: await beginLogin(deps, user, firstFactor, context) };
  }
  if (emailAuthenticationFor(deps, configured.app)) {
    const matched = await userByProviderEmail(deps, profile);
    if (matched) return { status: 'login', login: await signInByEmail(deps, configured, matched, { ...answer, profile }, firstFactor, context) };
  }
  return signUpFromProvider(deps, configured, profile, answer.tokens, next, context);
}

/**
 * preSocialLogin's `{ connectTo }`: the provider account, nobody's yet, connected to that user in
 * one transaction with its audit record and the owner's notice (a new way into their account),
 * then that user's login, through their stages. A parallel sign-in that connected the same
 * provider account first wins: to this user, the login goes on; to anyone else, it is refused.
 */
async function connectAndSignIn(
  deps: LatchkeyDeps,
  configured: ConfiguredProvider,
  user: User,
  answer: { profile: ProviderProfile; tokens?: ProviderTokens },
  firstFactor: FirstFactor,
  context: LoginContext,
): Promise<ProviderLoginResult> {
  const providerId = configured.provider.id;
  const now = deps.clock.now();
  let notice: QueuedMail | undefined;
  try {
    notice = await commitChange(deps, async (change) => {
      const { repositories } = change;
      const account = await repositories.socialAccounts.create({ userId: user.id, provider: providerId, uid: answer.profile.uid, extraData: answer.profile.extraData, dateJoined: now, lastLogin: now });
      await storeProviderTokens(deps, repositories, account.id, configured.app, answer.tokens);
      await change.record('social_account_added', user.id, context.client, { provider: providerId });
      return change.queueMail(socialAccountNotice(deps, user, 'account_connected', configured.provider.name, context.client));
    });
  } catch (error) {
    if (!isLatchkeyError(error, 'social_account_exists')) throw error;
    const winner = await deps.store.socialAccounts.find(providerId, answer.profile.uid);
    if (winner?.userId !== user.id) return { status: 'refused', refusal: new LatchkeyError('social_account_exists', CONNECTED_ELSEWHERE, { reason: 'connected_other' }) };
  }
  // A failed delivery stays in the outbox, which tries it again; the sign-in goes on.
  await deliverMail(deps, notice);
  return { status: 'login', login: await beginLogin(deps, user, firstFactor, context) };
}

const CONNECTED_ELSEWHERE = msg('The third-party account is already connected to a different account.');

/**
 * SOCIALACCOUNT_EMAIL_AUTHENTICATION: the provider vouches for an address a local account has.
 * A stranger's password on an address its account never verified is wiped first; with
 * SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT the provider account is connected for good.
 */
async function signInByEmail(
  deps: LatchkeyDeps,
  configured: ConfiguredProvider,
  matched: EmailMatch,
  answer: { profile: ProviderProfile; tokens?: ProviderTokens },
  firstFactor: FirstFactor,
  context: LoginContext,
): Promise<LoginResult> {
  const { user } = matched;
  if (!matched.addressVerified) await wipePassword(deps, matched);
  if (deps.settings.SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT) {
    const now = deps.clock.now();
    await deps.store.transaction(async (repositories) => {
      const account = await repositories.socialAccounts.create({ userId: user.id, provider: configured.provider.id, uid: answer.profile.uid, extraData: answer.profile.extraData, dateJoined: now, lastLogin: now });
      await storeProviderTokens(deps, repositories, account.id, configured.app, answer.tokens);
    });
    await deps.events.emit('social_account_added', user.id, context.client, { provider: configured.provider.id });
  }
  return beginLogin(deps, (await deps.store.users.findById(user.id)) ?? user, firstFactor, context);
}
