import type { FastifyRequest } from 'fastify';
import { isUsablePassword } from '../../account/passwords/index.js';
import type { AuthenticatorType } from '../../mfa/model.js';
import type { User } from '../../account/model.js';
import { currentPendingLogin, signupAwaitsVerification, type PendingLogin } from '../kit/session-state.js';
import type { HttpContext } from '../kit/context.js';
import { loginCodeToConfirm } from '../kit/login-code-state.js';
import { pendingProviderSignup } from '../social/provider-sign-ins.js';
import { offeredProviders, providerDataOf, type ProviderData } from './provider-data.js';

/**
 * The flows a client may perform next, as 401 responses list them: how to start (login, signup
 * while it is open) and the stage a login waits at, marked `is_pending` (with the user's
 * authenticator types for `mfa_authenticate`, which clients route on).
 */
export interface Flow {
  id:
    | 'login'
    | 'login_by_code'
    | 'signup'
    | 'verify_email'
    | 'mfa_authenticate'
    | 'mfa_trust'
    | 'mfa_login_webauthn'
    | 'mfa_signup_webauthn'
    | 'reauthenticate'
    | 'mfa_reauthenticate'
    | 'provider_redirect'
    | 'provider_token'
    | 'provider_signup'
    /** A login stage of the project's own (account/login-stages.ts), by its id: always pending. */
    | (string & {});
  is_pending?: true;
  types?: AuthenticatorType[];
  /** For `provider_redirect` and `provider_token`: the ids of the providers that sign in that way. */
  providers?: string[];
  /** For `provider_signup`: the provider whose signup waits for its form. */
  provider?: ProviderData;
}

/** The kinds of authenticator a user has, each once (a user may have several security keys). */
async function authenticatorTypes(ctx: HttpContext, userId: number): Promise<AuthenticatorType[]> {
  return [...new Set((await ctx.deps.store.authenticators.listForUser(userId)).map((authenticator) => authenticator.type))];
}

async function pendingFlow(ctx: HttpContext, pending: PendingLogin): Promise<Flow> {
  if (pending.stage === 'mfa_authenticate') return { id: 'mfa_authenticate', is_pending: true, types: await authenticatorTypes(ctx, pending.login.userId) };
  return { id: pending.stage, is_pending: true };
}

/**
 * The providers' flows (allauth's order: after login and signup): signing in by redirect, for the
 * browser client only (an app cannot follow it), and with a token, listing the providers that
 * can; while a provider's signup waits for its form, that flow, pending.
 */
async function providerFlows(ctx: HttpContext, request: FastifyRequest): Promise<{ start: Flow[]; pending: Flow | undefined }> {
  const providers = await offeredProviders(ctx);
  const start: Flow[] = [];
  if (ctx.client === 'browser' && providers.length > 0) start.push({ id: 'provider_redirect', providers: providers.map((provider) => provider.id) });
  const takingTokens = providers.filter((provider) => provider.flows.includes('provider_token'));
  if (takingTokens.length > 0) start.push({ id: 'provider_token', providers: takingTokens.map((provider) => provider.id) });
  const signup = await pendingProviderSignup(ctx, request);
  const provider = signup && (await providerDataOf(ctx, signup.provider));
  return { start, pending: provider && { id: 'provider_signup', provider, is_pending: true } };
}

export async function availableFlows(ctx: HttpContext, request: FastifyRequest): Promise<Flow[]> {
  const flows: Flow[] = [{ id: 'login' }];
  if (await ctx.deps.adapter.isOpenForSignup()) flows.push({ id: 'signup' });
  // allauth's place for it: after login and signup. A code asked for by this client and still
  // live marks the flow pending, as does a login stopped at the login_by_code stage
  // (ACCOUNT_LOGIN_BY_CODE_REQUIRED), listed here once; a login stopped at a later stage is listed
  // below as its own.
  const pending = await currentPendingLogin(ctx, request);
  const atCodeStage = pending?.stage === 'login_by_code';
  if (ctx.deps.settings.ACCOUNT_LOGIN_BY_CODE_ENABLED || atCodeStage) {
    flows.push((await loginCodeToConfirm(ctx, request)).kind !== 'none' ? { id: 'login_by_code', is_pending: true } : { id: 'login_by_code' });
  }
  const fromProviders = await providerFlows(ctx, request);
  flows.push(...fromProviders.start);
  // allauth's flow for a passkey login (auth/webauthn/login), offered where the project has it.
  if (ctx.deps.settings.MFA_PASSKEY_LOGIN_ENABLED) flows.push({ id: 'mfa_login_webauthn' });
  if (pending) {
    if (!atCodeStage) flows.push(await pendingFlow(ctx, pending));
  } else if (fromProviders.pending) flows.push(fromProviders.pending);
  else if (await signupAwaitsVerification(ctx, request)) flows.push({ id: 'verify_email', is_pending: true });
  return flows;
}

/** How a signed-in user may prove again who they are: the password if they have one, a code if they have a second factor. */
export async function reauthenticationFlows(ctx: HttpContext, user: User): Promise<Flow[]> {
  const flows: Flow[] = [];
  if (isUsablePassword(user.password)) flows.push({ id: 'reauthenticate' });
  const types = await authenticatorTypes(ctx, user.id);
  if (types.length > 0) flows.push({ id: 'mfa_reauthenticate', types });
  return flows;
}
