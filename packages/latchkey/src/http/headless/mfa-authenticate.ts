import type { FastifyInstance } from 'fastify';
import { continueLogin } from '../../login/pipeline.js';
import { reauthenticateWithCode } from '../../mfa/flows/authenticate.js';
import { codeRecord } from '../kit/authentication-records.js';
import type { HttpContext } from '../kit/context.js';
import { booleanField, textField } from '../kit/input.js';
import { clientOf } from '../kit/request-info.js';
import { loginWaitingAt, settleLogin } from '../kit/session-state.js';
import { loginContextOf } from '../kit/login-context.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendAuthenticated, sendErrors, sendUnauthenticated } from './respond.js';
import { answers, bodies, headlessOperation, REFUSALS } from './operation-schema.js';

/**
 * auth/2fa/authenticate (a login's second step), auth/2fa/reauthenticate (a code instead of the
 * password) and, for the browser client, auth/2fa/trust ("trust this browser?", the mfa_trust
 * stage, which the pipeline asks only of a browser after a code).
 *
 * A request that finds no login waiting at the stage it serves is answered 401 with the flows
 * the client can perform (the pending one, if any), as allauth's server answers it: the contract
 * lists no 409 for these operations, and a client routes on the 401's flows.
 */
export function registerMfaAuthenticationRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;

  api.post('/auth/2fa/authenticate', {
    schema: headlessOperation('post', {
      tag: 'Two-factor authentication',
      summary: "Give the login's code",
      description: 'A code from the authenticator app or a recovery code, for a login waiting at `mfa_authenticate`. With "trust this browser" on (browser client), the login then waits at `mfa_trust`.',
      body: bodies.Code,
      limited: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const pending = await loginWaitingAt(ctx, request, 'mfa_authenticate');
    if (!pending) return sendUnauthenticated(ctx, request, reply);
    let result;
    try {
      result = await continueLogin(deps, pending.login, { code: textField(request.body, 'code') ?? '' }, loginContextOf(ctx, request));
    } catch (error) {
      // A wrong code is 400 incorrect_code on the code field; too many are 429 with Retry-After.
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx, pending)));
  });

  // The contract registers the trust question for the browser client only: an app keeps no cookie.
  if (ctx.client === 'browser') {
    api.post('/auth/2fa/trust', {
      schema: headlessOperation('post', {
        tag: 'Two-factor authentication',
        summary: 'Trust this browser',
        description: 'Answers the `mfa_trust` step that follows the code when MFA_TRUST_ENABLED is on: `true` sets a cookie that lets later logins of this user in this browser skip the code (never the password). Either answer completes the login.',
        body: bodies.Trust,
        responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated },
      }),
    }, async (request, reply) => {
      const pending = await loginWaitingAt(ctx, request, 'mfa_trust');
      if (!pending) return sendUnauthenticated(ctx, request, reply);
      const trust = booleanField(request.body, 'trust');
      if (trust === undefined) return sendErrors(ctx, request, reply, 400, [{ ...REFUSALS.trust, param: 'trust' }]);
      // The account may have changed while the question was open: the pipeline reads it again.
      const result = await continueLogin(deps, pending.login, { trust }, loginContextOf(ctx, request));
      return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx, pending)));
    });
  }

  api.post('/auth/2fa/reauthenticate', {
    schema: headlessOperation('post', {
      tag: 'Two-factor authentication',
      summary: 'Confirm identity with a code',
      description: 'Renews the proof of identity with a code instead of the password (the `mfa_reauthenticate` flow).',
      body: bodies.Code,
      limited: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.AuthenticationOrReauthentication },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    // A user without a second factor has no code that can be right: the flow refuses it as any
    // wrong code (as allauth does), and the reauthentication flows never offered this one to them.
    try {
      const type = await reauthenticateWithCode(deps, { user, code: textField(request.body, 'code') ?? '', client: clientOf(request) });
      await ctx.sessions.markReauthenticated(request, codeRecord(type, deps.clock.now(), true));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return sendAuthenticated(ctx, request, reply, user);
  });
}

