import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CustomLoginStage } from '../../account/login-stages.js';
import { answerCustomStage } from '../../login/pipeline.js';
import { customStageOf } from '../../login/project-stages.js';
import { msg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { CSRF_FORM_FIELD } from '../kit/csrf.js';
import { bodyObject, textField } from '../kit/input.js';
import { loginContextOf } from '../kit/login-context.js';
import { loginWaitingAt, settleLogin, type PendingLogin } from '../kit/session-state.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, formWithError, redirect, refusalStatus, renderPage, type FormState } from './page.js';

/**
 * The form's text fields, as the stage's `complete` reads them: every field the form posted but
 * the CSRF token, each a string (one sent twice, or holding a NUL, reads as '', as on every page).
 */
function stageAnswer(body: unknown): Record<string, string> {
  const answer: Record<string, string> = {};
  for (const name of Object.keys(bodyObject(body))) {
    if (name !== CSRF_FORM_FIELD) answer[name] = textField(body, name) ?? '';
  }
  return answer;
}

/**
 * The page of a login stage of the project's own (account/login-stages.ts), at
 * /accounts/login/stage/<id>/: the stage's template, for a browser whose login waits at that
 * stage (anyone else goes to the login page). Its form posts back here; the stage records the
 * answer and the login carries on, to the next stage's page or to where it was going.
 */
export function registerLoginStagePages(scope: FastifyInstance, ctx: HttpContext): void {
  /** The stage named in the path and the browser's login waiting at it, or undefined. */
  async function waitingStage(request: FastifyRequest): Promise<{ stage: CustomLoginStage; pending: PendingLogin } | undefined> {
    const id = (request.params as { id?: unknown }).id;
    const stage = typeof id === 'string' ? customStageOf(ctx.deps, id) : undefined;
    const pending = stage && (await loginWaitingAt(ctx, request, stage.id));
    return stage && pending ? { stage, pending } : undefined;
  }

  const show = (request: FastifyRequest, reply: FastifyReply, stage: CustomLoginStage, form: FormState = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, stage.template, { title: msg('Sign in'), stage: stage.id, form }, status);

  const page = ctx.deps.urls.route('account_login_stage');
  scope.get(page, async (request, reply) => {
    const waiting = await waitingStage(request);
    if (!waiting) return redirect(reply, ctx.deps.urls.urlFor('account_login'));
    return show(request, reply, waiting.stage);
  });

  scope.post(page, async (request, reply) => {
    const waiting = await waitingStage(request);
    if (!waiting) return redirect(reply, ctx.deps.urls.urlFor('account_login'));
    const { stage, pending } = waiting;
    const answer = stageAnswer(request.body);
    let result;
    try {
      result = await answerCustomStage(ctx.deps, pending.login, stage, answer, loginContextOf(ctx, request));
    } catch (error) {
      return show(request, reply, stage, formWithError(answer, error), refusalStatus(reply, error));
    }
    const outcome = await settleLogin(ctx, request, reply, result, { remember: pending.remember, next: pending.next });
    return presentLogin(ctx, request, reply, outcome, pending.next);
  });
}
