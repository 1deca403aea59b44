import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { confirmLoginCode, INCORRECT_LOGIN_CODE, requestLoginCode } from '../../login/code.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { currentLoginCode, forgetLoginCode, keepLoginCode } from '../kit/login-code-state.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { safeRedirectOr } from '../kit/safe-redirect.js';
import { settleLogin } from '../kit/session-state.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState } from './page.js';

export const LOGIN_CODE_PAGE = '/accounts/login/code/';
export const LOGIN_CODE_CONFIRM_PAGE = '/accounts/login/code/confirm/';
const ASK_AGAIN = 'The code has expired or was used up. Ask for a new one.';

/**
 * allauth's "Mail me a sign-in code" pages (ACCOUNT_LOGIN_BY_CODE_ENABLED): the address, then the
 * code. Both answers read the same whether or not the address has an account; the code is kept in
 * this browser's session only (kit/login-code-state.ts), and its login is settled like a password's,
 * so a second factor is still asked for.
 */
export function registerLoginCodePages(scope: FastifyInstance, page: HttpContext): void {
  const requestForm = (request: FastifyRequest, reply: FastifyReply, form: FormState, next: string, status = 200): Promise<FastifyReply> =>
    renderPage(page, request, reply, 'account/request_login_code.html', { title: 'Mail me a sign-in code', form, next }, status);
  const confirmForm = (request: FastifyRequest, reply: FastifyReply, form: FormState, email: string, next: string, status = 200): Promise<FastifyReply> =>
    renderPage(page, request, reply, 'account/confirm_login_code.html', { title: 'Enter the sign-in code', form, email, next }, status);
  const nextOf = (request: FastifyRequest): string => safeRedirectOr((request.query as Record<string, unknown>).next, '');
  const withNext = (path: string, next: string): string => (next === '' ? path : `${path}?next=${encodeURIComponent(next)}`);

  scope.get(LOGIN_CODE_PAGE, async (request, reply) => {
    const next = nextOf(request);
    if (await page.sessions.currentUser(request)) return redirect(reply, next || page.deps.settings.LOGIN_REDIRECT_URL);
    return requestForm(request, reply, emptyForm(), next);
  });

  scope.post(LOGIN_CODE_PAGE, async (request, reply) => {
    const fields = formFields(request.body, ['email', 'next']);
    const next = safeRedirectOr(fields.next, '');
    try {
      const { state, delivery } = await requestLoginCode(page.deps, { email: fields.email, client: clientOf(request) });
      // Not awaited: the answer must not wait for mail that only an existing account gets.
      void delivery.then((outcome) => logMailFailures(request, [outcome], 'login code'));
      await keepLoginCode(page, request, reply, state);
      return redirect(reply, withNext(LOGIN_CODE_CONFIRM_PAGE, next));
    } catch (error) {
      return requestForm(request, reply, formWithError({ email: fields.email }, error), next, refusalStatus(reply, error));
    }
  });

  scope.get(LOGIN_CODE_CONFIRM_PAGE, async (request, reply) => {
    const next = nextOf(request);
    const state = await currentLoginCode(page, request);
    if (!state) return redirect(reply, withNext(LOGIN_CODE_PAGE, next));
    return confirmForm(request, reply, emptyForm(), state.email, next);
  });

  scope.post(LOGIN_CODE_CONFIRM_PAGE, async (request, reply) => {
    const fields = formFields(request.body, ['code', 'next']);
    const next = safeRedirectOr(fields.next, '');
    const state = await currentLoginCode(page, request);
    if (!state) return redirect(reply, withNext(LOGIN_CODE_PAGE, next));
    const confirmation = await confirmLoginCode(page.deps, state, { code: fields.code, ...loginContextOf(page, request) });
    if (confirmation.status === 'incorrect' && confirmation.state) {
      await keepLoginCode(page, request, reply, confirmation.state);
      return confirmForm(request, reply, { values: {}, errors: { code: [INCORRECT_LOGIN_CODE] } }, state.email, next, 400);
    }
    await forgetLoginCode(page, request);
    if (confirmation.status !== 'login') {
      await flash(page, request, reply, { level: 'error', text: confirmation.status === 'incorrect' ? `${INCORRECT_LOGIN_CODE} ${ASK_AGAIN}` : ASK_AGAIN });
      return redirect(reply, withNext(LOGIN_CODE_PAGE, next));
    }
    const remember = page.deps.settings.ACCOUNT_SESSION_REMEMBER ?? false;
    const outcome = await settleLogin(page, request, reply, confirmation.result, { remember, next });
    return presentLogin(page, request, reply, outcome, next);
  });
}
