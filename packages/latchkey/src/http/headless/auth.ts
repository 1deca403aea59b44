import type { FastifyInstance } from 'fastify';
import { reauthenticate } from '../../account/flows/reauthenticate.js';
import { signup } from '../../account/flows/signup.js';
import { isLatchkeyError } from '../../core/errors.js';
import { loginWithPassword } from '../../login/password.js';
import { passwordRecord } from '../kit/authentication-records.js';
import type { HttpContext } from '../kit/context.js';
import { textField } from '../kit/input.js';
import { clientOf } from '../kit/request-info.js';
import { submittedFields } from '../kit/signup-fields.js';
import { settleLogin, settleSignup } from '../kit/session-state.js';
import { signOut } from '../kit/sign-out.js';
import { loginContextOf } from '../kit/login-context.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendAuthenticated, sendEnvelope, sendErrors, sendUnauthenticated } from './respond.js';

/** auth/session, auth/login, auth/signup, auth/reauthenticate: the same flows the pages call. */
export function registerAuthRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;
  const byEmail = deps.settings.USERNAME_TYPE === 'email';

  api.get('/auth/session', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    return user ? sendAuthenticated(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
  });

  api.delete('/auth/session', async (request, reply) => {
    // Ends the session, and with it any login waiting for a code.
    await signOut(ctx, request, reply);
    return sendUnauthenticated(ctx, request, reply);
  });

  api.post('/auth/login', async (request, reply) => {
    if (await ctx.sessions.currentUser(request)) return sendEnvelope(ctx, request, reply, 409);
    // Either identifier the project accepts; the flow decides which it is (ACCOUNT_LOGIN_METHODS).
    const login = (byEmail ? textField(request.body, 'email') : (textField(request.body, 'username') ?? textField(request.body, 'email'))) ?? '';
    try {
      const result = await loginWithPassword(deps, { login, password: textField(request.body, 'password') ?? '', ...loginContextOf(ctx, request) });
      return await presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx)));
    } catch (error) {
      // One answer for every refused credential, naming the password field as allauth's does.
      if (isLatchkeyError(error, 'invalid_credentials')) {
        return sendErrors(ctx, request, reply, 400, [{ message: error.message, code: error.reason ?? 'invalid', param: 'password' }]);
      }
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
  });

  api.post('/auth/signup', async (request, reply) => {
    if (await ctx.sessions.currentUser(request)) return sendEnvelope(ctx, request, reply, 409);
    const password = textField(request.body, 'password') ?? '';
    try {
      // One password field here: the API has no "type it again" (password2 is the same value).
      const result = await signup(deps, { email: textField(request.body, 'email') ?? '', username: textField(request.body, 'username') ?? '', password1: password, password2: password, client: clientOf(request), submitted: submittedFields(request.body) });
      return await presentLogin(ctx, request, reply, await settleSignup(ctx, request, reply, result, loginOptionsOf(ctx)));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error, { params: { password1: 'password', password2: 'password' } });
    }
  });

  api.post('/auth/reauthenticate', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    try {
      await reauthenticate(deps, { user, password: textField(request.body, 'password') ?? '', client: clientOf(request) });
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error, { codes: { invalid_credentials: 'incorrect_password' } });
    }
    await ctx.sessions.markReauthenticated(request, passwordRecord(deps.settings, user, deps.clock.now()));
    return sendAuthenticated(ctx, request, reply, user);
  });
}
