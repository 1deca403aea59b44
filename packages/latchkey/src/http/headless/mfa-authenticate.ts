import type { FastifyInstance } from 'fastify';
import { continueLoginWithCode, userOfPassedLogin, type LoginMethod } from '../../account/flows/login.js';
import { reauthenticateWithCode, trustThisBrowser } from '../../mfa/flows/authenticate.js';
import { codeRecord } from '../kit/authentication-records.js';
import { setMfaTrustCookie } from '../kit/mfa-trust-cookie.js';
import { clientOf } from '../kit/request-info.js';
import { clearPendingLogin, currentPendingLogin, startPendingLogin } from '../kit/pending-login.js';
import { completeLogin } from './complete-login.js';
import type { HeadlessContext } from './context.js';
import { booleanField, stringField } from './input.js';
import { sendRefusal } from './refusals.js';
import { sendAuthenticated, sendErrors, sendUnauthenticated } from './respond.js';

/** The ways a login can have passed its code stage, the only ones the trust question follows. */
const CODE_METHODS: readonly LoginMethod[] = ['password+totp', 'password+recovery_codes'];

/**
 * auth/2fa/authenticate (a login's second step), auth/2fa/reauthenticate (a code instead of the
 * password) and, for the browser client, auth/2fa/trust ("trust this browser?").
 *
 * A request that finds no login waiting at the stage it serves is answered 401 with the flows
 * the client can perform (the pending one, if any), as allauth's server answers it: the contract
 * lists no 409 for these operations, and a client routes on the 401's flows.
 */
export function registerMfaAuthenticationRoutes(api: FastifyInstance, ctx: HeadlessContext): void {
  const { deps } = ctx;
  const { settings } = deps;
  /**
   * The trust question is the browser's: an app keeps no cookie to trust, so its login completes
   * with the code, as the contract registers auth/2fa/trust for the browser client only.
   */
  const asksToTrust = ctx.client === 'browser' && settings.MFA_TRUST_ENABLED;

  api.post('/auth/2fa/authenticate', async (request, reply) => {
    const pending = await currentPendingLogin(ctx, request);
    if (pending?.stage !== 'mfa_authenticate') return sendUnauthenticated(ctx, request, reply);
    let result;
    try {
      result = await continueLoginWithCode(deps, pending.login, stringField(request.body, 'code') ?? '', { client: clientOf(request) });
    } catch (error) {
      // A wrong code is 400 incorrect_code on the code field; too many are 429 with Retry-After.
      return sendRefusal(ctx, request, reply, error);
    }
    if (!result) {
      // The password changed since it was proved: this login is over, whatever the code.
      await clearPendingLogin(ctx, request);
      return sendUnauthenticated(ctx, request, reply);
    }
    if (result.status === 'authenticated' && asksToTrust) {
      // Every stage has passed, but the session waits for the answer to one more question.
      await startPendingLogin(ctx, request, reply, { login: pending.login, stage: 'mfa_trust', method: result.method, remember: pending.remember, next: pending.next });
      return sendUnauthenticated(ctx, request, reply);
    }
    return completeLogin(ctx, request, reply, result);
  });

  if (ctx.client === 'browser') {
    api.post('/auth/2fa/trust', async (request, reply) => {
      const pending = await currentPendingLogin(ctx, request);
      if (pending?.stage !== 'mfa_trust') return sendUnauthenticated(ctx, request, reply);
      const trust = booleanField(request.body, 'trust');
      if (trust === undefined) return sendErrors(ctx, request, reply, 400, [{ message: 'Answer true or false.', code: 'invalid', param: 'trust' }]);
      // The code has passed, but the account may have changed while the question was open.
      const user = await userOfPassedLogin(deps, pending.login);
      const method = pending.method;
      if (!user || method === undefined || !CODE_METHODS.includes(method)) {
        await clearPendingLogin(ctx, request);
        return sendUnauthenticated(ctx, request, reply);
      }
      if (trust) setMfaTrustCookie(reply, settings, await trustThisBrowser(deps, user));
      return completeLogin(ctx, request, reply, { status: 'authenticated', user, method });
    });
  }

  api.post('/auth/2fa/reauthenticate', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    // A user without a second factor has no code that can be right: the flow refuses it as any
    // wrong code (as allauth does), and the reauthentication flows never offered this one to them.
    try {
      const type = await reauthenticateWithCode(deps, { user, code: stringField(request.body, 'code') ?? '', client: clientOf(request) });
      await ctx.sessions.markReauthenticated(request, codeRecord(type, deps.clock.now(), true));
    } catch (error) {
      return sendRefusal(ctx, request, reply, error);
    }
    return sendAuthenticated(ctx, request, reply, user);
  });
}

