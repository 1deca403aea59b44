import type { FastifyInstance } from 'fastify';
import { loginWithPassword, runLoginStages } from '../../account/flows/login.js';
import { reauthenticate } from '../../account/flows/reauthenticate.js';
import { signup } from '../../account/flows/signup.js';
import { isLatchkeyError } from '../../core/errors.js';
import { passwordRecord } from '../kit/authentication-records.js';
import { clientOf } from '../kit/request-info.js';
import { mfaTrustTokenOf } from '../kit/mfa-trust-cookie.js';
import { clearPendingLogin } from '../kit/pending-login.js';
import { completeLogin } from './complete-login.js';
import type { HeadlessContext } from './context.js';
import { clearSignupVerificationPending, markSignupVerificationPending } from './pending-flows.js';
import { stringField } from './input.js';
import { sendRefusal } from './refusals.js';
import { sendAuthenticated, sendEnvelope, sendErrors, sendUnauthenticated } from './respond.js';

/** auth/session, auth/login, auth/signup, auth/reauthenticate: the same flows the pages call. */
export function registerAuthRoutes(api: FastifyInstance, ctx: HeadlessContext): void {
  const { deps } = ctx;
  const byEmail = deps.settings.USERNAME_TYPE === 'email';
  /** The browser's "trust" cookie; apps have none (the trust flow is the browser's). */
  const trustToken = (request: Parameters<typeof mfaTrustTokenOf>[0]) => (ctx.client === 'browser' ? mfaTrustTokenOf(request) : undefined);

  api.get('/auth/session', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    return user ? sendAuthenticated(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
  });

  api.delete('/auth/session', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    // Ends the session, and with it any login waiting for a code (security test 11).
    await ctx.sessions.logout(request, reply);
    if (user) await deps.events.emit('user_logged_out', user.id, clientOf(request));
    return sendUnauthenticated(ctx, request, reply);
  });

  api.post('/auth/login', async (request, reply) => {
    if (await ctx.sessions.currentUser(request)) return sendEnvelope(ctx, request, reply, 409);
    // Either identifier the project accepts; the flow decides which it is (ACCOUNT_LOGIN_METHODS).
    const login = (byEmail ? stringField(request.body, 'email') : (stringField(request.body, 'username') ?? stringField(request.body, 'email'))) ?? '';
    try {
      const result = await loginWithPassword(deps, { login, password: stringField(request.body, 'password') ?? '', client: clientOf(request), mfaTrustToken: trustToken(request) });
      return await completeLogin(ctx, request, reply, result);
    } catch (error) {
      // One answer for every refused credential, naming the password field as allauth's does.
      if (isLatchkeyError(error, 'invalid_credentials')) {
        const code = byEmail || login.includes('@') ? 'email_password_mismatch' : 'username_password_mismatch';
        return sendErrors(ctx, request, reply, 400, [{ message: error.message, code, param: 'password' }]);
      }
      return sendRefusal(ctx, request, reply, error);
    }
  });

  api.post('/auth/signup', async (request, reply) => {
    if (await ctx.sessions.currentUser(request)) return sendEnvelope(ctx, request, reply, 409);
    const password = stringField(request.body, 'password') ?? '';
    const client = clientOf(request);
    try {
      // One password field here: the API has no "type it again" (password2 is the same value).
      const result = await signup(deps, { email: stringField(request.body, 'email') ?? '', username: stringField(request.body, 'username') ?? '', password1: password, password2: password, client });
      await clearPendingLogin(ctx, request);
      if (result.status === 'verification_sent') {
        // The same answer whether or not the address had an account (the flow says nothing either).
        await markSignupVerificationPending(ctx, request, reply);
        return await sendUnauthenticated(ctx, request, reply);
      }
      await clearSignupVerificationPending(ctx, request);
      // Signing in after signup passes the same stages as any login.
      return await completeLogin(ctx, request, reply, await runLoginStages(deps, result.user, { client, mfaTrustToken: trustToken(request) }));
    } catch (error) {
      return sendRefusal(ctx, request, reply, error, { params: { password1: 'password', password2: 'password' } });
    }
  });

  api.post('/auth/reauthenticate', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    try {
      await reauthenticate(deps, { user, password: stringField(request.body, 'password') ?? '', client: clientOf(request) });
    } catch (error) {
      return sendRefusal(ctx, request, reply, error, { codes: { invalid_credentials: 'incorrect_password' } });
    }
    await ctx.sessions.markReauthenticated(request, passwordRecord(deps.settings, user, deps.clock.now()));
    return sendAuthenticated(ctx, request, reply, user);
  });
}
