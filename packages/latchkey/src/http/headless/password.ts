import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { changePassword, setPassword, type PasswordChangeResult } from '../../account/flows/password-change.js';
import { requestPasswordReset, resetPasswordWithKey, userForResetKey } from '../../account/flows/password-reset.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import { isLatchkeyError } from '../../core/errors.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { currentPendingLogin, forgetPendingLogin } from '../kit/session-state.js';
import type { HttpContext } from '../kit/context.js';
import { textField } from '../kit/input.js';
import { sendHeadlessRefusal } from './refusals.js';
import { sendAuthenticated, sendErrors, sendOk, sendUnauthenticated } from './respond.js';
import { userData } from './user.js';
import { answeringWith } from '../kit/after-answer.js';
import { answers, bodies, headlessOperation, REFUSALS } from './operation-schema.js';

const KEY_HEADER = 'x-password-reset-key';

/**
 * auth/password/request, auth/password/reset (GET: whose key it is; POST: a new password with it)
 * and account/password/change, over the flows the password pages call. The API has one password
 * field where the forms have two, so it is passed as both.
 */
export function registerPasswordRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;
  const invalidKey = (request: FastifyRequest, reply: FastifyReply) =>
    sendErrors(ctx, request, reply, 400, [{ ...REFUSALS.resetKey, param: 'key' }]);

  api.post('/auth/password/request', {
    schema: headlessOperation('post', {
      tag: 'Password reset',
      summary: 'Ask for a reset link',
      description: 'Mails a reset link to every active account the address reaches. The answer is the same whether or not there is one, and it does not wait for the mail.',
      body: bodies.RequestPassword,
      limited: true,
      responses: { 200: answers.StatusOK, 400: answers.Error },
    }),
  }, async (request, reply) => {
    try {
      // The mail, which only an existing account gets, is neither awaited nor begun before the answer has gone (it would tell whether the address has one).
      const { delivery } = await requestPasswordReset(answeringWith(deps, reply), { email: textField(request.body, 'email') ?? '', client: clientOf(request) });
      void delivery.then((outcomes) => logMailFailures(request, outcomes, 'password reset'));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return sendOk(ctx, request, reply);
  });

  api.get('/auth/password/reset', {
    schema: headlessOperation('get', {
      tag: 'Password reset',
      summary: 'Look up a reset key',
      description: 'Whose password the mailed key resets, without using it.',
      parameters: ['PasswordResetKey'],
      responses: { 200: answers.PasswordResetInfo, 400: answers.Error },
    }),
  }, async (request, reply) => {
    const user = await userForResetKey(deps, request.headers[KEY_HEADER]);
    if (!user) return invalidKey(request, reply);
    return sendOk(ctx, request, reply, { data: { user: userData(deps, user) } });
  });

  api.post('/auth/password/reset', {
    schema: headlessOperation('post', {
      tag: 'Password reset',
      summary: 'Set a new password with a reset key',
      description: 'Sets the password and ends every session of the account. Nobody is signed in (401): the person signs in with the new password, and passes their second factor if they have one.',
      body: bodies.ResetPassword,
      limited: true,
      busy: true,
      responses: { 400: answers.Error, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const password = textField(request.body, 'password') ?? '';
    let result: PasswordChangeResult;
    try {
      result = await resetPasswordWithKey(deps, { key: textField(request.body, 'key') ?? '', password1: password, password2: password, client: clientOf(request) });
    } catch (error) {
      if (isLatchkeyError(error, 'invalid_key')) return invalidKey(request, reply);
      return sendHeadlessRefusal(ctx, request, reply, error, { params: { password1: 'password', password2: 'password' } });
    }
    logMailFailures(request, [result.notification], 'password reset notification');
    // A login of this account waiting in this session proved the old password: it can never finish.
    if ((await currentPendingLogin(ctx, request))?.login.userId === result.user.id) await forgetPendingLogin(ctx, request);
    // The reset signs nobody in (the account's sessions have all ended): an account with MFA must
    // still pass it, so the client goes on to log in with the new password.
    return sendUnauthenticated(ctx, request, reply);
  });

  api.post('/account/password/change', {
    schema: headlessOperation('post', {
      tag: 'Account: password',
      summary: 'Change the password',
      description: 'The current password and the new one; an account without a usable password sets one without. Every other session ends, and this one continues under a new id (an app gets its new token in `meta.session_token`).',
      body: bodies.ChangePassword,
      limited: true,
      busy: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    const password = textField(request.body, 'new_password') ?? '';
    const currentSession = await ctx.sessions.session(request);
    const common = { user, password1: password, password2: password, client: clientOf(request), ...(currentSession ? { currentSession } : {}) };
    let result: PasswordChangeResult;
    try {
      // An account without a password (social-only, or made unusable) sets one; no current password to give.
      result = isUsablePassword(user.password)
        ? await changePassword(deps, { ...common, oldPassword: textField(request.body, 'current_password') ?? '' })
        : await setPassword(deps, common);
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error, {
        params: { oldpassword: 'current_password', password1: 'new_password', password2: 'new_password' },
        codes: { invalid_credentials: 'incorrect_password' },
      });
    }
    logMailFailures(request, [result.notification], 'password change notification');
    // Every other session has ended with the change; this one gets a new id or token, so one seen
    // before the change, a stolen one included, is worthless after it.
    await ctx.sessions.rotate(request, reply);
    return sendAuthenticated(ctx, request, reply, result.user);
  });
}
