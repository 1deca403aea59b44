import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError } from '../../core/errors.js';
import { loginWithPasskey } from '../../login/passkey.js';
import { continueLogin } from '../../login/pipeline.js';
import { securityKeyOptionsForLogin } from '../../login/second-factor-choices.js';
import { reauthenticateWithWebauthn } from '../../mfa/flows/authenticate.js';
import { webauthnAuthenticationOptions } from '../../mfa/flows/webauthn.js';
import { codeRecord } from '../kit/authentication-records.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { clientOf } from '../kit/request-info.js';
import { loginWaitingAt, settleLogin } from '../kit/session-state.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendAuthenticated, sendEnvelope, sendUnauthenticated } from './respond.js';
import { assertionAnswer, sendWebauthnOptions, webauthnSupported } from './webauthn-kit.js';
import { answers, bodies, headlessOperation } from './operation-schema.js';

/**
 * auth/webauthn/authenticate (a security key at a login's second step), auth/webauthn/reauthenticate
 * (a key instead of the password) and, with MFA_PASSKEY_LOGIN_ENABLED, auth/webauthn/login (a
 * passkey alone): each a GET for the options and a POST with the browser's answer, over the flows
 * the pages call. Registered only where the project offers security keys, as allauth's.
 *
 * The second step serves only the client whose login waits at mfa_authenticate (401 with the
 * flows otherwise, as auth/2fa/authenticate); its options name the user's keys, so no one else may
 * have them. A key's answer is checked against the ceremony this client's session began, which it
 * uses up: an answer replayed, or made for another session's options, is refused.
 */
export function registerWebauthnAuthenticationRoutes(api: FastifyInstance, ctx: HttpContext): void {
  if (!webauthnSupported(ctx)) return;
  const { deps } = ctx;

  /** A flow's refusal; no key to offer (the user has none) is 404, nothing to do here. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, error: unknown) =>
    isLatchkeyError(error, 'not_found') ? sendEnvelope(ctx, request, reply, 404) : sendHeadlessRefusal(ctx, request, reply, error);

  api.get('/auth/webauthn/authenticate', {
    schema: headlessOperation('get', {
      tag: 'Two-factor authentication',
      summary: "Options for the login's security key",
      description: 'For the session whose login waits at `mfa_authenticate` (401 otherwise): the request options naming the user\'s keys, for `navigator.credentials.get()`; 404 when the user has none.',
      responses: { 200: answers.WebAuthnRequestOptions, 401: answers.Unauthenticated, 404: answers.NotFound },
    }),
  }, async (request, reply) => {
    const pending = await loginWaitingAt(ctx, request, 'mfa_authenticate');
    if (!pending) return sendUnauthenticated(ctx, request, reply);
    try {
      return await sendWebauthnOptions(ctx, request, reply, 'request_options', await securityKeyOptionsForLogin(deps, pending.login));
    } catch (error) {
      return refuse(request, reply, error);
    }
  });

  api.post('/auth/webauthn/authenticate', {
    schema: headlessOperation('post', {
      tag: 'Two-factor authentication',
      summary: 'Give the login\'s security key',
      description: 'The browser\'s answer to those options, checked against them (this session\'s challenge, once, within five minutes), the site\'s origin and relying party, and the key\'s signature counter. Counted against the login limits like a code. 200, or 401 at the next step (`mfa_trust`); 400 `incorrect_code` for a bad answer.',
      body: bodies.WebAuthnCredential,
      limited: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const pending = await loginWaitingAt(ctx, request, 'mfa_authenticate');
    if (!pending) return sendUnauthenticated(ctx, request, reply);
    let result;
    try {
      // Checked, claimed and counted against the login limits by the MFA stage, as a code is.
      result = await continueLogin(deps, pending.login, { webauthn: await assertionAnswer(ctx, request, 'authenticate') }, loginContextOf(ctx, request));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx, pending)));
  });

  api.get('/auth/webauthn/reauthenticate', {
    schema: headlessOperation('get', {
      tag: 'Two-factor authentication',
      summary: 'Options for confirming identity with a key',
      description: 'The signed-in user\'s request options (the `mfa_reauthenticate` flow lists `webauthn` when they have a key); 404 when they have none.',
      responses: { 200: answers.WebAuthnRequestOptions, 401: answers.Unauthenticated, 404: answers.NotFound },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    try {
      return await sendWebauthnOptions(ctx, request, reply, 'request_options', await webauthnAuthenticationOptions(deps, 'reauthenticate', user));
    } catch (error) {
      return refuse(request, reply, error);
    }
  });

  api.post('/auth/webauthn/reauthenticate', {
    schema: headlessOperation('post', {
      tag: 'Two-factor authentication',
      summary: 'Confirm identity with a key',
      description: 'Renews the proof of identity with a security key\'s answer to those options.',
      body: bodies.WebAuthnCredential,
      limited: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.AuthenticationOrReauthentication },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    try {
      await reauthenticateWithWebauthn(deps, { user, answer: await assertionAnswer(ctx, request, 'reauthenticate'), client: clientOf(request) });
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    await ctx.sessions.markReauthenticated(request, codeRecord('webauthn', deps.clock.now(), true));
    return sendAuthenticated(ctx, request, reply, user);
  });

  if (!deps.settings.MFA_PASSKEY_LOGIN_ENABLED) return;

  api.get('/auth/webauthn/login', {
    schema: headlessOperation('get', {
      tag: 'Authentication',
      summary: 'Options for a passkey sign-in',
      description: 'Request options naming no key: the browser offers the passkeys it holds for this site. An app without a session gets its token here (`meta.session_token`), to send with the answer.',
      responses: { 200: answers.WebAuthnRequestOptions },
    }),
  }, async (request, reply) =>
    sendWebauthnOptions(ctx, request, reply, 'request_options', await webauthnAuthenticationOptions(deps, 'login')),
  );

  // As allauth's (whose contract lists no 409 here): a signed-in client that signs in with a
  // passkey becomes whoever the passkey names; its old session ends and nothing of another user's
  // carries over (kit/request-sessions.ts login).
  api.post('/auth/webauthn/login', {
    schema: headlessOperation('post', {
      tag: 'Authentication',
      summary: 'Sign in with a passkey',
      description: 'The passkey names the account and, having verified the person, stands for both factors. 200, or 401 when the login waits at a step (`verify_email`); 400 `incorrect_code` for a bad answer, `account_inactive` for an inactive account. A signed-in client becomes whoever the passkey names, in a new session.',
      body: bodies.WebAuthnCredential,
      limited: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    let result;
    try {
      result = await loginWithPasskey(deps, { ...(await assertionAnswer(ctx, request, 'login')), ...loginContextOf(ctx, request) });
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx)));
  });
}
