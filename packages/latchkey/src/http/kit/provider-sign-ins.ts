import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignInState } from '../../socialaccount/flows/provider-login.js';
import type { PendingProviderSignup } from '../../socialaccount/flows/results.js';
import type { HttpContext } from './context.js';
import { forgetPendingLogin } from './session-state.js';

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
export async function keepProviderSignup(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, signup: PendingProviderSignup): Promise<void> {
  await forgetPendingLogin(ctx, request);
  const session = await ctx.sessions.ensureSession(request, reply);
  await ctx.deps.sessions.saveData(session, { ...session.data, [PROVIDER_SIGNUP]: signup });
}

export async function pendingProviderSignup(ctx: HttpContext, request: FastifyRequest): Promise<PendingProviderSignup | undefined> {
  const value = (await ctx.sessions.session(request))?.data[PROVIDER_SIGNUP] as PendingProviderSignup | undefined;
  return value && value.expiresAt > ctx.deps.clock.now().getTime() ? value : undefined;
}

export async function forgetProviderSignup(ctx: HttpContext, request: FastifyRequest): Promise<void> {
  const session = await ctx.sessions.session(request);
  if (!session || !Object.hasOwn(session.data, PROVIDER_SIGNUP)) return;
  const { [PROVIDER_SIGNUP]: _forgotten, ...rest } = session.data;
  await ctx.deps.sessions.saveData(session, rest);
}
