import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordLogin, type LoginResult } from '../../account/flows/login.js';
import { loginRecords } from '../kit/authentication-records.js';
import { clientOf } from '../kit/request-info.js';
import { clearPendingLogin, startPendingLogin } from '../kit/pending-login.js';
import type { HeadlessContext } from './context.js';
import { clearSignupVerificationPending } from './pending-flows.js';
import { sendAuthenticated, sendErrors, sendUnauthenticated } from './respond.js';

export const ACCOUNT_INACTIVE = 'This account is inactive.';

/**
 * The headless counterpart of the pages' finishLogin: a login that passed every stage gets a new
 * session (a new id or token: one planted before is worthless) and 200; one stopped at a stage is
 * kept pending in a new session and answered 401 with that stage; an inactive account is refused.
 */
export async function completeLogin(ctx: HeadlessContext, request: FastifyRequest, reply: FastifyReply, result: LoginResult): Promise<FastifyReply> {
  await clearSignupVerificationPending(ctx, request);
  if (result.status === 'inactive') {
    await clearPendingLogin(ctx, request);
    return sendErrors(ctx, request, reply, 400, [{ message: ACCOUNT_INACTIVE, code: 'account_inactive' }]);
  }
  if (result.status === 'stopped') {
    await startPendingLogin(ctx, request, reply, { login: result.pending, stage: result.stage, remember: rememberLogin(ctx), next: '' });
    return sendUnauthenticated(ctx, request, reply);
  }
  await clearPendingLogin(ctx, request);
  const authentications = loginRecords(ctx.deps.settings, result.user, result.method, ctx.deps.clock.now());
  await ctx.sessions.login(request, reply, result.user, { remember: rememberLogin(ctx), authentications });
  await recordLogin(ctx.deps, result.user, clientOf(request), result.method);
  return sendAuthenticated(ctx, request, reply, result.user);
}

/**
 * A headless login has no "remember me" box: the browser's session cookie lasts SESSION_COOKIE_AGE
 * unless the project asks for browser-session cookies (ACCOUNT_SESSION_REMEMBER=false).
 */
function rememberLogin(ctx: HeadlessContext): boolean {
  return ctx.deps.settings.ACCOUNT_SESSION_REMEMBER ?? true;
}
