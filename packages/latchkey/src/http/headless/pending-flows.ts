import type { FastifyReply, FastifyRequest } from 'fastify';
import { isUsablePassword } from '../../account/passwords/index.js';
import type { AuthenticatorType } from '../../mfa/model.js';
import type { User } from '../../account/model.js';
import { currentPendingLogin, type PendingLogin } from '../kit/pending-login.js';
import type { HeadlessContext } from './context.js';

/**
 * The flows a client may perform next, as 401 responses list them: how to start (login, signup
 * while it is open) and the stage a login waits at, marked `is_pending` (with the user's
 * authenticator types for `mfa_authenticate`, which clients route on).
 */
export interface Flow {
  id: 'login' | 'signup' | 'verify_email' | 'mfa_authenticate' | 'mfa_trust' | 'reauthenticate' | 'mfa_reauthenticate';
  is_pending?: true;
  types?: AuthenticatorType[];
}

/** Session key marking that a signup in this session awaits the mailed link (see markSignupVerificationPending). */
const SIGNUP_VERIFICATION = '_headless_signup_verification';

async function authenticatorTypes(ctx: HeadlessContext, userId: number): Promise<AuthenticatorType[]> {
  return (await ctx.deps.store.authenticators.listForUser(userId)).map((authenticator) => authenticator.type);
}

async function pendingFlow(ctx: HeadlessContext, pending: PendingLogin): Promise<Flow> {
  if (pending.stage === 'mfa_authenticate') return { id: 'mfa_authenticate', is_pending: true, types: await authenticatorTypes(ctx, pending.login.userId) };
  return { id: pending.stage, is_pending: true };
}

export async function availableFlows(ctx: HeadlessContext, request: FastifyRequest): Promise<Flow[]> {
  const flows: Flow[] = [{ id: 'login' }];
  if (await ctx.deps.adapter.isOpenForSignup()) flows.push({ id: 'signup' });
  const pending = await currentPendingLogin(ctx, request);
  if (pending) flows.push(await pendingFlow(ctx, pending));
  else if (await isSignupVerificationPending(ctx, request)) flows.push({ id: 'verify_email', is_pending: true });
  return flows;
}

/** How a signed-in user may prove again who they are: the password if they have one, a code if they have a second factor. */
export async function reauthenticationFlows(ctx: HeadlessContext, user: User): Promise<Flow[]> {
  const flows: Flow[] = [];
  if (isUsablePassword(user.password)) flows.push({ id: 'reauthenticate' });
  const types = await authenticatorTypes(ctx, user.id);
  if (types.length > 0) flows.push({ id: 'mfa_reauthenticate', types });
  return flows;
}

/**
 * A signup under mandatory verification answers "verify your email" whether or not the address
 * already had an account (the flow tells nobody which). The session remembers that answer, for
 * ACCOUNT_LOGIN_TIMEOUT, so that the client sees the same pending flow when it asks again.
 */
export async function markSignupVerificationPending(ctx: HeadlessContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const session = await ctx.sessions.ensureSession(request, reply);
  const expiresAt = ctx.deps.clock.now().getTime() + ctx.deps.settings.ACCOUNT_LOGIN_TIMEOUT * 1000;
  await ctx.deps.sessions.saveData(session, { ...session.data, [SIGNUP_VERIFICATION]: expiresAt });
}

async function isSignupVerificationPending(ctx: HeadlessContext, request: FastifyRequest): Promise<boolean> {
  const expiresAt = (await ctx.sessions.session(request))?.data[SIGNUP_VERIFICATION];
  return typeof expiresAt === 'number' && expiresAt > ctx.deps.clock.now().getTime();
}

/** Forgets the signup's pending verification (the address was confirmed, or a login began). */
export async function clearSignupVerificationPending(ctx: HeadlessContext, request: FastifyRequest): Promise<void> {
  const session = await ctx.sessions.session(request);
  if (!session || !(SIGNUP_VERIFICATION in session.data)) return;
  const { [SIGNUP_VERIFICATION]: _cleared, ...rest } = session.data;
  await ctx.deps.sessions.saveData(session, rest);
}
