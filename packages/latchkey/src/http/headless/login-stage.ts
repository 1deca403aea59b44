import type { FastifyInstance } from 'fastify';
import { answerCustomStage } from '../../login/pipeline.js';
import { customStageOf, loginStagesOf } from '../../login/project-stages.js';
import type { HttpContext } from '../kit/context.js';
import { bodyObject } from '../kit/input.js';
import { loginContextOf } from '../kit/login-context.js';
import { loginWaitingAt, settleLogin } from '../kit/session-state.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendUnauthenticated } from './respond.js';

/** The ids of the project's own login stages, in order (none by default). */
export function customStageIds(deps: HttpContext['deps']): string[] {
  return loginStagesOf(deps).flatMap((entry) => (typeof entry === 'string' ? [] : [entry.id]));
}

/**
 * POST auth/stage/{id}: the answer to a login stage of the project's own (account/login-stages.ts),
 * which the 401's flows list as pending under the stage's id. allauth's contract has no operation
 * for a project's stage (its projects write one each); this is Latchkey's, the same for every
 * stage: the JSON body goes to the stage's `complete`, then the login carries on, and the answer
 * is the login's, as after any step: 200 signed in, or 401 with the next pending flow. A refusal
 * of the stage is 400 with its message. Served only where the project has a stage of its own.
 */
export function registerLoginStageRoutes(api: FastifyInstance, ctx: HttpContext): void {
  if (customStageIds(ctx.deps).length === 0) return;

  api.post('/auth/stage/:id', async (request, reply) => {
    const id = (request.params as { id?: unknown }).id;
    const stage = typeof id === 'string' ? customStageOf(ctx.deps, id) : undefined;
    const pending = stage && (await loginWaitingAt(ctx, request, stage.id));
    // No login waits here: the flows tell the client what it can do instead (as auth/2fa/authenticate does).
    if (!stage || !pending) return sendUnauthenticated(ctx, request, reply);
    let result;
    try {
      result = await answerCustomStage(ctx.deps, pending.login, stage, bodyObject(request.body), loginContextOf(ctx, request));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx, pending)));
  });
}
