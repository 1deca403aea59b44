import type { FastifyInstance } from 'fastify';
import { answerCustomStage } from '../../login/pipeline.js';
import { customStageOf, loginStagesOf } from '../../login/project-stages.js';
import type { HttpContext } from '../kit/context.js';
import { bodyObject } from '../kit/input.js';
import { loginContextOf } from '../kit/login-context.js';
import { loginWaitingAt, settleLogin } from '../kit/session-state.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { answers, headlessOperation } from './operation-schema.js';
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
  const stageIds = customStageIds(ctx.deps);
  if (stageIds.length === 0) return;

  const schema = headlessOperation('post', {
    tag: 'Authentication',
    summary: "Answer a login step of this site's own",
    description: `For a login waiting at one of this site's own steps (${stageIds.map((id) => `\`${id}\``).join(', ')}), named in the pending flow: the JSON body is what the step asks for. 200 when signed in, 401 at the next step (or when no login waits at this one); 400 when the step refuses the answer.`,
    body: { type: 'object', description: 'The fields the step asks for; the site documents them.', additionalProperties: true },
    responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated },
  });
  const params = { type: 'object', properties: { id: { type: 'string', enum: stageIds, description: "The step's id, as its flow names it." } }, required: ['id'] };
  api.post('/auth/stage/:id', { schema: { ...schema, params } }, async (request, reply) => {
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
