import type { FastifyInstance } from 'fastify';
import { confirmLoginCode, INCORRECT_LOGIN_CODE, requestLoginCode } from '../../login/mailed-codes/login-by-code.js';
import { continueLogin, type LoginResult } from '../../login/pipeline.js';
import type { HttpContext } from '../kit/context.js';
import { textField } from '../kit/input.js';
import { loginContextOf } from '../kit/login-context.js';
import { forgetLoginCode, keepLoginCode, loginCodeToConfirm } from '../kit/login-code-state.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { settleLogin } from '../kit/session-state.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendEnvelope, sendErrors, sendUnauthenticated } from './respond.js';
import { answeringWith } from '../kit/after-answer.js';
import { answers, bodies, headlessOperation } from './operation-schema.js';

/**
 * auth/code/request and auth/code/confirm (ACCOUNT_LOGIN_BY_CODE_ENABLED): the flow of
 * login/code.ts, its state kept in this client's session as the pages keep it. A request answers
 * 401 with `login_by_code` pending whether or not the address has an account; a confirmation
 * answers as a login does (signed in, or the next stage pending), 400 for a wrong code, and 409
 * once no code is pending (never asked, expired, used, or its attempts used up).
 *
 * auth/code/confirm also takes the code of a login stopped at login_by_code
 * (ACCOUNT_LOGIN_BY_CODE_REQUIRED, allauth's same flow id), which the stopped login holds; which
 * code an answer is for is login/mailed-codes/code-to-confirm.ts's. An expired or used-up code there ends the login (401, nothing
 * pending): the person signs in again for a new one.
 */
export function registerLoginCodeRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;
  const enabled = deps.settings.ACCOUNT_LOGIN_BY_CODE_ENABLED;
  if (!enabled && deps.settings.ACCOUNT_LOGIN_BY_CODE_REQUIRED === false) return;

  if (enabled) {
    api.post('/auth/code/request', {
      schema: headlessOperation('post', {
        tag: 'Authentication',
        summary: 'Ask for a sign-in code',
        description: 'Mails a short code to the account the address names, and keeps the login in this session: 401 with `login_by_code` pending, the same answer whether or not there is an account, without waiting for the mail.',
        body: bodies.RequestLoginCode,
        limited: true,
        responses: { 400: answers.Error, 401: answers.Unauthenticated },
      }),
    }, async (request, reply) => {
      try {
        // The mail, which only an existing account gets, is neither awaited nor begun before the
        // answer has gone: the session is still written after this.
        const { state, delivery } = await requestLoginCode(answeringWith(deps, reply), { email: textField(request.body, 'email') ?? '', client: clientOf(request) });
        void delivery.then((outcome) => logMailFailures(request, [outcome], 'login code'));
        await keepLoginCode(ctx, request, reply, state);
      } catch (error) {
        return sendHeadlessRefusal(ctx, request, reply, error);
      }
      return sendUnauthenticated(ctx, request, reply);
    });
  }

  api.post('/auth/code/confirm', {
    schema: headlessOperation('post', {
      tag: 'Authentication',
      summary: 'Sign in with the mailed code',
      description: 'The code works only in the session that asked for it (or whose login, waiting at `login_by_code`, had it mailed), once, for a few minutes and a few tries. 200 when signed in; 401 when the login waits at a further step (`verify_email`, `mfa_authenticate`), or when the code of a waiting login has expired or been used up (the login is over: sign in again); 400 for a wrong code; 409 when no code is pending.',
      body: bodies.ConfirmLoginCode,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const toConfirm = await loginCodeToConfirm(ctx, request);
    if (toConfirm.kind === 'stage_code') {
      const { waiting } = toConfirm;
      let result: LoginResult;
      try {
        result = await continueLogin(deps, waiting.login, { emailCode: textField(request.body, 'code') ?? '' }, loginContextOf(ctx, request));
      } catch (error) {
        return sendHeadlessRefusal(ctx, request, reply, error);
      }
      return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx, waiting)));
    }
    if (toConfirm.kind === 'none') return sendEnvelope(ctx, request, reply, 409);
    const { state } = toConfirm;
    const code = textField(request.body, 'code') ?? '';
    const confirmation = await confirmLoginCode(deps, state, { code, ...loginContextOf(ctx, request) });
    if (confirmation.status === 'incorrect' && confirmation.state) await keepLoginCode(ctx, request, reply, confirmation.state);
    else await forgetLoginCode(ctx, request);
    if (confirmation.status === 'incorrect') return sendErrors(ctx, request, reply, 400, [{ message: INCORRECT_LOGIN_CODE, code: 'incorrect_code', param: 'code' }]);
    if (confirmation.status === 'expired') return sendEnvelope(ctx, request, reply, 409);
    return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, confirmation.result, loginOptionsOf(ctx)));
  });
}
