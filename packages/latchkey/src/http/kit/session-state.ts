import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignupResult } from '../../account/flows/signup.js';
import type { User } from '../../account/model.js';
import { completeLogin } from '../../login/complete.js';
import type { LoginResult, PendingLoginState } from '../../login/pipeline.js';
import type { LoginStage } from '../../login/stages.js';
import { waitingLoginEnd, waitingLoginHasEnded } from '../../login/waiting-login.js';
import { loginRecords, samlSignInOf } from './authentication-records.js';
import type { HttpContext } from './context.js';
import { keepVerificationCode } from './email-code-state.js';
import { setMfaTrustCookie } from './mfa-trust-cookie.js';
import { clientOf } from './request-info.js';

/**
 * What a client's session holds on the way to a change of the account, for every door alike (a
 * browser's cookie session, an app's session token), so that a journey begun through one door
 * carries on through another:
 * - a login stopped at a stage (until it ends: login/waiting-login.ts), carried on only by that
 *   client, only at that stage, and ended by signing in again or out;
 * - a signup that waits for its mailed link (the headless API lists it as a pending flow);
 * - the secret of an authenticator app that waits for its first code.
 * settleLogin turns a login's result into the session it leaves, and names the outcome for the
 * door to present in its own shape.
 */
const PENDING_LOGIN = '_pending_login';
const SIGNUP_AWAITING_VERIFICATION = '_signup_awaiting_verification';
const PENDING_TOTP = '_mfa_pending_totp';

export interface PendingLogin {
  /** The flow's state of the stopped login (whose, what it proved, a mark of the credentials). */
  login: PendingLoginState;
  stage: LoginStage;
  /** Whether the login is remembered, decided as it began (login/remember.ts) and kept to its end. */
  remember: boolean;
  next: string;
  expiresAt: string;
}

/** What became of a login, for the door to present: signed in, waiting at a stage, inactive, or over. */
export type LoginOutcome = { kind: 'signed_in'; user: User } | { kind: 'stopped'; stage: LoginStage } | { kind: 'inactive' } | { kind: 'ended' };
/** What became of a signup: its login's outcome, or a wait for the mailed link. */
export type SignupOutcome = LoginOutcome | { kind: 'verification_sent' };

async function saveValue(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, key: string, value: unknown): Promise<void> {
  const session = await ctx.sessions.ensureSession(request, reply);
  await ctx.deps.sessions.saveData(session, { ...session.data, [key]: value });
}

async function forgetValue(ctx: HttpContext, request: FastifyRequest, key: string): Promise<void> {
  const session = await ctx.sessions.session(request);
  if (!session || !(key in session.data)) return;
  const { [key]: _forgotten, ...rest } = session.data;
  await ctx.deps.sessions.saveData(session, rest);
}

/** The client's stopped login, or undefined when there is none or it has expired (then it is forgotten). */
export async function currentPendingLogin(ctx: HttpContext, request: FastifyRequest): Promise<PendingLogin | undefined> {
  const pending = (await ctx.sessions.session(request))?.data[PENDING_LOGIN] as PendingLogin | undefined;
  if (pending === undefined) return undefined;
  if (waitingLoginHasEnded(ctx.deps, new Date(pending.expiresAt))) {
    await forgetValue(ctx, request, PENDING_LOGIN);
    return undefined;
  }
  return pending;
}

/** The client's stopped login if it waits at `stage`. */
export async function loginWaitingAt(ctx: HttpContext, request: FastifyRequest, stage: LoginStage): Promise<PendingLogin | undefined> {
  const pending = await currentPendingLogin(ctx, request);
  return pending?.stage === stage ? pending : undefined;
}

export function forgetPendingLogin(ctx: HttpContext, request: FastifyRequest): Promise<void> {
  return forgetValue(ctx, request, PENDING_LOGIN);
}

/**
 * Replaces the flow's state of the client's stopped login where it waits (a resend gave it a new
 * code), under the same session id and with the same expiry: nothing was proved meanwhile.
 */
export async function replacePendingLoginState(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, pending: PendingLogin, login: PendingLoginState): Promise<void> {
  await saveValue(ctx, request, reply, PENDING_LOGIN, { ...pending, login });
}

async function keepPendingLogin(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, pending: Omit<PendingLogin, 'expiresAt'>): Promise<void> {
  // The first factor has just been proved: like a login, a change of privilege. A session id
  // planted in the client before it (or seen by anyone else) must not be the one that can finish
  // the login with a stolen code, so the stopped login always lives under a new id.
  const session = (await ctx.sessions.rotate(request, reply)) ?? (await ctx.sessions.ensureSession(request, reply));
  await ctx.deps.sessions.saveData(session, { ...session.data, [PENDING_LOGIN]: { ...pending, expiresAt: waitingLoginEnd(ctx.deps).toISOString() } });
}

/**
 * The one place a login through any door ends up. A stopped login is kept for this client under a
 * new session id; any other result forgets it (and the signup's wait: a login has begun). A login
 * that passed every stage gets the user's new session (a new id or token: one planted before is
 * worthless), the record of how they proved who they are, the "trust this browser" cookie when
 * they asked for it, the SAML sign-in it came through (if any, for the IdP's single logout), and
 * completeLogin's last_login and user_logged_in.
 */
export async function settleLogin(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, result: LoginResult, options: { remember: boolean; next: string }): Promise<LoginOutcome> {
  await forgetValue(ctx, request, SIGNUP_AWAITING_VERIFICATION);
  if (result.status === 'stopped') {
    await keepPendingLogin(ctx, request, reply, { login: result.pending, stage: result.stage, ...options });
    return { kind: 'stopped', stage: result.stage };
  }
  await forgetPendingLogin(ctx, request);
  if (result.status !== 'authenticated') return { kind: result.status };
  const { deps } = ctx;
  if (ctx.client === 'browser') setMfaTrustCookie(reply, deps.settings, result.trustToken);
  const authentications = loginRecords(deps.settings, result.user, result.proofs, deps.clock.now());
  await ctx.sessions.login(request, reply, result.user, { remember: options.remember, authentications, samlSignIn: samlSignInOf(result.proofs) });
  await completeLogin(deps, result.user, result.proofs, clientOf(request));
  return { kind: 'signed_in', user: result.user };
}

/**
 * What a signup leaves in the session. Under mandatory verification a new account's login waits at
 * verify_email exactly as a password login's would (so confirming in this session carries it on
 * where ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION allows); an address that already had an account leaves
 * only a mark that the signup waits for its link, as long as a login waits (login/waiting-login.ts).
 * Both get a new session id and the same "verify your email" outcome, so the client cannot tell
 * which it was. Otherwise the new account's login is settled like any other.
 */
export async function settleSignup(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  result: SignupResult,
  options: { remember: boolean; next: string },
): Promise<SignupOutcome> {
  if (result.status === 'signed_up') {
    const outcome = await settleLogin(ctx, request, reply, result.login, options);
    // Optional verification by code: the new account's session keeps the code its mail carried.
    if (outcome.kind === 'signed_in' && result.verificationCode !== undefined) {
      await keepVerificationCode(ctx, request, reply, { userId: outcome.user.id, state: result.verificationCode });
    }
    return outcome;
  }
  if (result.login?.status === 'stopped') {
    await forgetValue(ctx, request, SIGNUP_AWAITING_VERIFICATION);
    await keepPendingLogin(ctx, request, reply, { login: result.login.pending, stage: result.login.stage, ...options });
  } else {
    await forgetPendingLogin(ctx, request);
    await ctx.sessions.rotate(request, reply);
    const wait: SignupWait = { until: waitingLoginEnd(ctx.deps).getTime(), email: result.email };
    await saveValue(ctx, request, reply, SIGNUP_AWAITING_VERIFICATION, wait);
    // Verification by code: the code no mail carries, kept as a signed-in user's would be.
    if (result.code !== undefined) await keepVerificationCode(ctx, request, reply, { userId: null, state: result.code });
  }
  return { kind: 'verification_sent' };
}

/** A signup's wait for its link: until when, and for which address. */
interface SignupWait {
  until: number;
  email: string;
}

/** The address a signup in this session waits to have confirmed, while the wait lasts. */
export async function signupAwaitingVerification(ctx: HttpContext, request: FastifyRequest): Promise<string | undefined> {
  const wait = (await ctx.sessions.session(request))?.data[SIGNUP_AWAITING_VERIFICATION] as Partial<SignupWait> | undefined;
  if (typeof wait?.until !== 'number' || typeof wait.email !== 'string') return undefined;
  return waitingLoginHasEnded(ctx.deps, new Date(wait.until)) ? undefined : wait.email;
}

export async function signupAwaitsVerification(ctx: HttpContext, request: FastifyRequest): Promise<boolean> {
  return (await signupAwaitingVerification(ctx, request)) !== undefined;
}

/** Forgets the signup's wait (the address was confirmed). */
export function forgetSignupAwaitingVerification(ctx: HttpContext, request: FastifyRequest): Promise<void> {
  return forgetValue(ctx, request, SIGNUP_AWAITING_VERIFICATION);
}

/**
 * The encrypted secret of an authenticator app awaiting its first code (TotpSetup.pending), as
 * the flow sealed it. The pages and the headless API keep it under the same key, so a setup begun
 * in one carries on in the other, and both show the same secret until it is activated.
 */
export async function pendingTotpSecret(ctx: HttpContext, request: FastifyRequest): Promise<string | undefined> {
  const value = (await ctx.sessions.session(request))?.data[PENDING_TOTP];
  return typeof value === 'string' ? value : undefined;
}

/** Keeps (or, given undefined, forgets) the secret awaiting its first code. */
export async function keepPendingTotpSecret(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, pending: string | undefined): Promise<void> {
  if (pending === undefined) await forgetValue(ctx, request, PENDING_TOTP);
  else await saveValue(ctx, request, reply, PENDING_TOTP, pending);
}
