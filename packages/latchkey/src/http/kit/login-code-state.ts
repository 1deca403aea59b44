import type { FastifyReply, FastifyRequest } from 'fastify';
import { codeToConfirm, type CodeToConfirm } from '../../login/mailed-codes/code-to-confirm.js';
import { loginCodeIsLive, type LoginCodeState } from '../../login/mailed-codes/login-by-code.js';
import type { HttpContext } from './context.js';
import { currentPendingLogin, type PendingLogin } from './session-state.js';

/**
 * Where every door keeps a requested sign-in code's state (login/mailed-codes/login-by-code.ts):
 * in the client's own session (a browser's cookie session, an app's session token), so that only
 * the client that asked for the code can use it, and a journey begun on the pages can be finished
 * there or through the headless API of the same session alike.
 */
const LOGIN_CODE = '_login_code';

/** The client's live code login, or undefined (an expired one is forgotten on the way). */
export async function currentLoginCode(ctx: HttpContext, request: FastifyRequest): Promise<LoginCodeState | undefined> {
  const state = (await ctx.sessions.session(request))?.data[LOGIN_CODE] as LoginCodeState | undefined;
  if (state === undefined) return undefined;
  if (!loginCodeIsLive(ctx.deps, state)) {
    await forgetLoginCode(ctx, request);
    return undefined;
  }
  return state;
}

export async function keepLoginCode(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, state: LoginCodeState): Promise<void> {
  const session = await ctx.sessions.ensureSession(request, reply);
  await ctx.deps.sessions.saveData(session, { ...session.data, [LOGIN_CODE]: state });
}

export async function forgetLoginCode(ctx: HttpContext, request: FastifyRequest): Promise<void> {
  const session = await ctx.sessions.session(request);
  if (!session || !(LOGIN_CODE in session.data)) return;
  const { [LOGIN_CODE]: _forgotten, ...rest } = session.data;
  await ctx.deps.sessions.saveData(session, rest);
}

/** Which of this client's mailed codes a sign-in code it gives is for (login/mailed-codes/code-to-confirm.ts). */
export async function loginCodeToConfirm(ctx: HttpContext, request: FastifyRequest): Promise<CodeToConfirm<PendingLogin>> {
  return codeToConfirm(ctx.deps.settings, await currentPendingLogin(ctx, request), await currentLoginCode(ctx, request));
}
