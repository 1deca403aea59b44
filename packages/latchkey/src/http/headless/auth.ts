import type { FastifyInstance } from 'fastify';
import { reauthenticate } from '../../account/flows/reauthenticate.js';
import { signup } from '../../account/flows/signup.js';
import { isLatchkeyError } from '../../core/errors.js';
import { loginWithPassword } from '../../login/password.js';
import { passwordRecord } from '../kit/authentication-records.js';
import type { HttpContext } from '../kit/context.js';
import { bodyObject, textField } from '../kit/input.js';
import { clientOf } from '../kit/request-info.js';
import { submittedFields } from '../kit/signup-fields.js';
import { settleLogin, settleSignup } from '../kit/session-state.js';
import { signOut } from '../kit/sign-out.js';
import { loginContextOf } from '../kit/login-context.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendAuthenticated, sendEnvelope, sendErrors, sendUnauthenticated } from './respond.js';
import { answers, bodies, headlessOperation } from './operation-schema.js';

/** auth/session, auth/login, auth/signup, auth/reauthenticate: the same flows the pages call. */
export function registerAuthRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;
  const byEmail = deps.settings.USERNAME_TYPE === 'email';

  api.get('/auth/session', {
    schema: headlessOperation('get', {
      tag: 'Authentication',
      summary: 'Who is signed in',
      description: 'The signed-in user and how they proved who they are, or 401 listing the flows that can sign someone in (with the pending one, if a login waits at a step).',
      responses: { 200: answers.Authenticated, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    return user ? sendAuthenticated(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
  });

  api.delete('/auth/session', {
    schema: headlessOperation('delete', {
      tag: 'Authentication',
      summary: 'Sign out',
      description: 'Ends the session, together with any login waiting for its next step. Always answers 401: nobody is signed in afterwards.',
      responses: { 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    // Ends the session, and with it any login waiting for a code.
    await signOut(ctx, request, reply);
    return sendUnauthenticated(ctx, request, reply);
  });

  api.post('/auth/login', {
    schema: headlessOperation('post', {
      tag: 'Authentication',
      summary: 'Sign in with a password',
      description: 'Username or email (as the configuration\'s `login_methods` allow) and password. 200 when signed in; 401 when the login waits at a step (`login_by_code`, `verify_email`, `mfa_authenticate`, `mfa_trust`), named in the pending flow; 409 when someone is already signed in.',
      body: bodies.Login,
      limited: true,
      busy: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    if (await ctx.sessions.currentUser(request)) return sendEnvelope(ctx, request, reply, 409);
    // Either identifier the project accepts; the flow decides which it is (ACCOUNT_LOGIN_METHODS).
    const login = (byEmail ? textField(request.body, 'email') : (textField(request.body, 'username') ?? textField(request.body, 'email'))) ?? '';
    try {
      const result = await loginWithPassword(deps, { login, password: textField(request.body, 'password') ?? '', ...loginContextOf(ctx, request) });
      return await presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx)));
    } catch (error) {
      // One answer for every refused credential, naming the password field as allauth's does.
      if (isLatchkeyError(error, 'invalid_credentials')) {
        return sendErrors(ctx, request, reply, 400, [{ message: error.text, code: error.reason ?? 'invalid', param: 'password' }]);
      }
      // An empty identifier is refused on the field the client sent (allauth's `username` or `email`).
      const identifier = byEmail || textField(request.body, 'username') === undefined ? 'email' : 'username';
      return sendHeadlessRefusal(ctx, request, reply, error, { params: { login: identifier } });
    }
  });

  api.post('/auth/signup', {
    schema: headlessOperation('post', {
      tag: 'Authentication',
      summary: 'Create an account',
      description: 'When email verification is mandatory the answer is 401 with a pending `verify_email` flow, whether or not the address already had an account (its owner is told by email). Otherwise the new account is signed in, through the same steps as a login.',
      body: bodies.Signup,
      limited: true,
      busy: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated, 403: answers.Forbidden, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    if (await ctx.sessions.currentUser(request)) return sendEnvelope(ctx, request, reply, 409);
    const password = textField(request.body, 'password') ?? '';
    try {
      // One password and one address here: the API has no "type it again" (password2 and email2 are the same values).
      const email = textField(request.body, 'email') ?? '';
      const name = textField(request.body, 'name') ?? '';
      const result = await signup(deps, { email, email2: email, username: textField(request.body, 'username') ?? '', name, password1: password, password2: password, userFields: bodyObject(request.body), client: clientOf(request), submitted: submittedFields(request.body) });
      return await presentLogin(ctx, request, reply, await settleSignup(ctx, request, reply, result, loginOptionsOf(ctx)));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error, { params: { password1: 'password', password2: 'password' } });
    }
  });

  api.post('/auth/reauthenticate', {
    schema: headlessOperation('post', {
      tag: 'Authentication',
      summary: 'Confirm the password again',
      description: 'Sensitive changes need a recent proof of identity; they answer 401 with the `reauthenticate` flow when it is too old. This renews it with the password.',
      body: bodies.Reauthenticate,
      limited: true,
      busy: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
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
