import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError, type LatchkeyError } from '../../core/errors.js';
import type { ConfiguredProvider } from '../../socialaccount/directory.js';
import type { SignedInRequester } from '../../socialaccount/flows/connections.js';
import type { SignInState } from '../../socialaccount/flows/provider-login.js';
import { completeProviderSignup } from '../../socialaccount/flows/provider-signup.js';
import type { PendingProviderSignup, ProviderLoginResult } from '../../socialaccount/flows/results.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { forgetPendingLogin, settleLogin, type LoginOutcome } from '../kit/session-state.js';

/**
 * The provider sign-ins a client has started and not finished, kept in its session by state: the
 * state in the callback must be one of them, so a callback this client did not start (a forged
 * link, another browser's state) finds nothing. A handful at most (two tabs, a retry): starting
 * more drops the oldest, and expired ones are dropped whenever the list is written.
 */
const SIGN_INS = '_socialaccount_sign_ins';
const MOST_PENDING = 5;

type SignIns = Record<string, SignInState>;

function signInsOf(data: Readonly<Record<string, unknown>>): SignIns {
  const value = data[SIGN_INS];
  return typeof value === 'object' && value !== null ? (value as SignIns) : {};
}

export async function keepSignIn(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, state: string, record: SignInState): Promise<void> {
  const session = await ctx.sessions.ensureSession(request, reply);
  const now = ctx.deps.clock.now().getTime();
  const kept = Object.entries(signInsOf(session.data))
    .filter(([, pending]) => pending.expiresAt > now)
    .sort(([, a], [, b]) => a.expiresAt - b.expiresAt)
    .slice(-(MOST_PENDING - 1));
  await ctx.deps.sessions.saveData(session, { ...session.data, [SIGN_INS]: { ...Object.fromEntries(kept), [state]: record } });
}

/** The sign-in started with `state`, removed from the session: a state is good for one callback. */
export async function takeSignIn(ctx: HttpContext, request: FastifyRequest, state: string): Promise<SignInState | undefined> {
  const session = await ctx.sessions.session(request);
  if (!session) return undefined;
  const signIns = signInsOf(session.data);
  if (!Object.hasOwn(signIns, state)) return undefined;
  const { [state]: taken, ...rest } = signIns;
  await ctx.deps.sessions.saveData(session, { ...session.data, [SIGN_INS]: rest });
  return taken;
}

/**
 * The social signup waiting for its form (at most one per session: a new provider answer
 * replaces it). Expired, it is as good as absent.
 */
const PROVIDER_SIGNUP = '_socialaccount_signup';

/**
 * Keeps the signup for its form. It is now what this client's sign-in waits for: a login stopped
 * earlier at a stage (an MFA code, say) is forgotten, so the client is not asked for both.
 */
async function keepProviderSignup(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, signup: PendingProviderSignup): Promise<void> {
  await forgetPendingLogin(ctx, request);
  const session = await ctx.sessions.ensureSession(request, reply);
  await ctx.deps.sessions.saveData(session, { ...session.data, [PROVIDER_SIGNUP]: signup });
}

export async function pendingProviderSignup(ctx: HttpContext, request: FastifyRequest): Promise<PendingProviderSignup | undefined> {
  const value = (await ctx.sessions.session(request))?.data[PROVIDER_SIGNUP] as PendingProviderSignup | undefined;
  return value && value.expiresAt > ctx.deps.clock.now().getTime() ? value : undefined;
}

async function forgetProviderSignup(ctx: HttpContext, request: FastifyRequest): Promise<void> {
  const session = await ctx.sessions.session(request);
  if (!session || !Object.hasOwn(session.data, PROVIDER_SIGNUP)) return;
  const { [PROVIDER_SIGNUP]: _forgotten, ...rest } = session.data;
  await ctx.deps.sessions.saveData(session, rest);
}

/** The signup waiting for its form, with its provider; undefined when none waits, it expired, or its app is gone. */
export async function waitingProviderSignup(ctx: HttpContext, request: FastifyRequest): Promise<{ pending: PendingProviderSignup; configured: ConfiguredProvider } | undefined> {
  const pending = await pendingProviderSignup(ctx, request);
  const configured = pending && (await ctx.deps.providerDirectory.provider(pending.provider));
  return pending && configured ? { pending, configured } : undefined;
}

/** What a provider's answer to a login came to, once settled in the client's session; `refused` is the project's (preSocialLogin). */
export type SettledProviderLogin = { kind: 'login'; outcome: LoginOutcome } | { kind: 'signup_form' } | { kind: 'signup_closed' } | { kind: 'refused'; refusal: LatchkeyError };

/**
 * A provider's answer to a login (a callback's, a token's, the social signup form's), settled in
 * the client's session, for every door: a signup still to fill in is kept for its form, replacing
 * any other; any other answer ends the one left unfinished (the client's latest answer is the one
 * that counts); a login is settled as every login is.
 */
export async function settleProviderLogin(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  result: ProviderLoginResult,
  options: { remember: boolean; next: string },
): Promise<SettledProviderLogin> {
  if (result.status === 'signup_form') {
    await keepProviderSignup(ctx, request, reply, result.signup);
    return { kind: 'signup_form' };
  }
  await forgetProviderSignup(ctx, request);
  if (result.status === 'signup_closed') return { kind: 'signup_closed' };
  if (result.status === 'refused') return { kind: 'refused', refusal: result.refusal };
  return { kind: 'login', outcome: await settleLogin(ctx, request, reply, result.login, options) };
}

/**
 * The social signup form's answer, for every door: the signup waiting in this session completed
 * and settled (settleProviderLogin), with where it was to lead. A field to correct throws the
 * flow's LatchkeyError and keeps the signup for another try; signup closed meanwhile ends it.
 * Undefined when no signup waits.
 */
export async function completeWaitingProviderSignup(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  fields: { email: string; username: string; userFields?: Readonly<Record<string, unknown>>; submitted?: Readonly<Record<string, unknown>> },
  options: { remember: boolean },
): Promise<{ settled: SettledProviderLogin; next: string } | undefined> {
  const waiting = await waitingProviderSignup(ctx, request);
  if (!waiting) return undefined;
  const { pending, configured } = waiting;
  let result: ProviderLoginResult;
  try {
    result = await completeProviderSignup(ctx.deps, configured, pending, fields, loginContextOf(ctx, request));
  } catch (error) {
    if (!isLatchkeyError(error, 'signup_closed')) throw error;
    result = { status: 'signup_closed' };
  }
  return { settled: await settleProviderLogin(ctx, request, reply, result, { remember: options.remember, next: pending.next }), next: pending.next };
}

/** The signed-in user as the connect and disconnect flows take them, or undefined when nobody is signed in. */
export async function signedInRequester(ctx: HttpContext, request: FastifyRequest): Promise<SignedInRequester | undefined> {
  const user = await ctx.sessions.currentUser(request);
  return user && { user, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) };
}
