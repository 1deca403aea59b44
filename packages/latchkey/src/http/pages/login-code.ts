import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { confirmLoginCode, INCORRECT_LOGIN_CODE, requestLoginCode } from '../../login/mailed-codes/login-by-code.js';
import { continueLogin, type LoginResult } from '../../login/pipeline.js';
import { remembersLogin } from '../../login/remember.js';
import { msg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { forgetLoginCode, keepLoginCode, loginCodeToConfirm } from '../kit/login-code-state.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { settleLogin, type PendingLogin } from '../kit/session-state.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState, signedInLanding } from './page.js';
import { answeringWith } from '../kit/after-answer.js';

const ASK_AGAIN = msg('The code has expired or was used up. Ask for a new one.');
const SIGN_IN_AGAIN = msg('The code has expired or was used up. Sign in again to have a new one sent.');
/** A wrong code that was the last try: the code is used up too. */
const INCORRECT_ASK_AGAIN = msg('Incorrect code. The code has expired or was used up. Ask for a new one.');

/**
 * allauth's "Mail me a sign-in code" pages (ACCOUNT_LOGIN_BY_CODE_ENABLED): the address, then the
 * code. Both answers read the same whether or not the address has an account; the code is kept in
 * this browser's session only (kit/login-code-state.ts), and its login is settled like a password's,
 * so a second factor is still asked for. The confirmation page also takes the code of a login
 * stopped at login_by_code (ACCOUNT_LOGIN_BY_CODE_REQUIRED: a code after the password or the
 * provider), which the stopped login itself holds; which code an answer is for is
 * login/mailed-codes/code-to-confirm.ts's.
 */
export function registerLoginCodePages(scope: FastifyInstance, ctx: HttpContext): void {
  const requestForm = (request: FastifyRequest, reply: FastifyReply, form: FormState, next: string, status = 200): Promise<FastifyReply> =>
    renderPage(ctx, request, reply, 'account/request_login_code.html', { title: msg('Mail me a sign-in code'), form, next }, status);
  const confirmForm = (request: FastifyRequest, reply: FastifyReply, form: FormState, email: string, next: string, status = 200, required = false): Promise<FastifyReply> =>
    renderPage(ctx, request, reply, 'account/confirm_login_code.html', { title: msg('Enter the sign-in code'), form, email, next, required }, status);
  const { urls } = ctx.deps;
  const nextOf = (request: FastifyRequest): string => redirectTargetOr(ctx.deps.adapter, (request.query as Record<string, unknown>).next, '');
  const withNext = (page: 'account_request_login_code' | 'account_confirm_login_code', next: string): string => urls.urlFor(page, {}, next === '' ? {} : { next });
  // Only ACCOUNT_LOGIN_BY_CODE_REQUIRED on: the confirmation page alone, for the stage's code.
  const enabled = ctx.deps.settings.ACCOUNT_LOGIN_BY_CODE_ENABLED;
  const startOver = (next: string): string => (enabled ? withNext('account_request_login_code', next) : urls.urlFor('account_login'));

  if (enabled) {
    scope.get(urls.route('account_request_login_code'), async (request, reply) => {
      const next = nextOf(request);
      const landing = await signedInLanding(ctx, request, next);
      if (landing !== undefined) return redirect(reply, landing);
      return requestForm(request, reply, emptyForm(), next);
    });

    scope.post(urls.route('account_request_login_code'), async (request, reply) => {
      const fields = formFields(request.body, ['email', 'next']);
      const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
      try {
        // The mail, which only an existing account gets, is neither awaited nor begun before the
        // answer has gone: the session is still written after this.
        const { state, delivery } = await requestLoginCode(answeringWith(ctx.deps, reply), { email: fields.email, client: clientOf(request) });
        void delivery.then((outcome) => logMailFailures(request, [outcome], 'login code'));
        await keepLoginCode(ctx, request, reply, state);
        return redirect(reply, withNext('account_confirm_login_code', next));
      } catch (error) {
        return requestForm(request, reply, formWithError({ email: fields.email }, error), next, refusalStatus(reply, error));
      }
    });
  }

  /** The code of a login stopped at login_by_code: wrong codes stay on the form; an expired or used-up one ends the login. */
  async function confirmStageCode(request: FastifyRequest, reply: FastifyReply, waiting: PendingLogin, code: string): Promise<FastifyReply> {
    const email = waiting.login.code?.email ?? '';
    let result: LoginResult;
    try {
      result = await continueLogin(ctx.deps, waiting.login, { emailCode: code }, loginContextOf(ctx, request));
    } catch (error) {
      return confirmForm(request, reply, formWithError({}, error), email, '', refusalStatus(reply, error), true);
    }
    const outcome = await settleLogin(ctx, request, reply, result, { remember: waiting.remember, next: waiting.next });
    if (outcome.kind === 'ended') {
      await flash(ctx, request, reply, { level: 'error', text: SIGN_IN_AGAIN });
      return redirect(reply, urls.urlFor('account_login'));
    }
    return presentLogin(ctx, request, reply, outcome, waiting.next);
  }

  scope.get(urls.route('account_confirm_login_code'), async (request, reply) => {
    const next = nextOf(request);
    const toConfirm = await loginCodeToConfirm(ctx, request);
    if (toConfirm.kind === 'stage_code') return confirmForm(request, reply, emptyForm(), toConfirm.waiting.login.code?.email ?? '', '', 200, true);
    if (toConfirm.kind === 'none') return redirect(reply, startOver(next));
    return confirmForm(request, reply, emptyForm(), toConfirm.state.email, next);
  });

  scope.post(urls.route('account_confirm_login_code'), async (request, reply) => {
    const fields = formFields(request.body, ['code', 'next']);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    const toConfirm = await loginCodeToConfirm(ctx, request);
    if (toConfirm.kind === 'stage_code') return confirmStageCode(request, reply, toConfirm.waiting, fields.code);
    if (toConfirm.kind === 'none') return redirect(reply, startOver(next));
    const { state } = toConfirm;
    const confirmation = await confirmLoginCode(ctx.deps, state, { code: fields.code, ...loginContextOf(ctx, request) });
    if (confirmation.status === 'incorrect' && confirmation.state) {
      await keepLoginCode(ctx, request, reply, confirmation.state);
      return confirmForm(request, reply, { values: {}, errors: { code: [INCORRECT_LOGIN_CODE] } }, state.email, next, 400);
    }
    await forgetLoginCode(ctx, request);
    if (confirmation.status !== 'login') {
      await flash(ctx, request, reply, { level: 'error', text: confirmation.status === 'incorrect' ? INCORRECT_ASK_AGAIN : ASK_AGAIN });
      return redirect(reply, withNext('account_request_login_code', next));
    }
    const outcome = await settleLogin(ctx, request, reply, confirmation.result, { remember: remembersLogin(ctx.deps.settings), next });
    return presentLogin(ctx, request, reply, outcome, next);
  });
}
