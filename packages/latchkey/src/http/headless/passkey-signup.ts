import type { FastifyInstance } from 'fastify';
import { beginPasskeySignup, completePasskeySignup, passkeySignupOptions } from '../../account/flows/passkey-signup.js';
import type { HttpContext } from '../kit/context.js';
import { bodyObject, textField } from '../kit/input.js';
import { loginContextOf } from '../kit/login-context.js';
import { clientOf } from '../kit/request-info.js';
import { submittedFields } from '../kit/signup-fields.js';
import { loginWaitingAt, settleLogin, settleSignup } from '../kit/session-state.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendEnvelope } from './respond.js';
import { registrationAnswer, sendWebauthnOptions, webauthnSupported } from './webauthn-kit.js';
import { answers, bodies, headlessOperation } from './operation-schema.js';

/**
 * auth/webauthn/signup (MFA_PASSKEY_SIGNUP_ENABLED), allauth's passkey signup, over the journey in
 * account/flows/passkey-signup.ts:
 * - POST {email, username}: the account, with no password. As auth/signup: 401 with
 *   `verify_email` pending (whether or not the address had an account), 400 for a bad field, 403
 *   when signup is closed, 409 when someone is signed in. The address is then verified by the
 *   mailed code (auth/email/verify), after which `mfa_signup_webauthn` is pending;
 * - GET: the creation options of the account's passkey; 409 unless `mfa_signup_webauthn` is pending;
 * - PUT {name, credential}: the new passkey, which signs the person in (200); 400 for a bad one
 *   (the signup still waits for a good one); 409 unless `mfa_signup_webauthn` is pending.
 * The ceremony is kept in the same session as the signup's login, and used up by the PUT.
 */
export function registerPasskeySignupRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;
  if (!webauthnSupported(ctx) || !deps.settings.MFA_PASSKEY_SIGNUP_ENABLED) return;
  const PATH = '/auth/webauthn/signup';

  api.post(PATH, {
    schema: headlessOperation('post', {
      tag: 'Authentication',
      summary: 'Sign up with a passkey',
      description: 'The signup form without a password. 401 with `verify_email` pending, whether or not the address had an account (its owner is told by email); after the mailed code, `mfa_signup_webauthn` is pending. 403 when signup is closed; 409 when someone is signed in.',
      body: bodies.PasskeySignup,
      limited: true,
      busy: true,
      responses: { 400: answers.Error, 401: answers.Unauthenticated, 403: answers.Forbidden, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    if (await ctx.sessions.currentUser(request)) return sendEnvelope(ctx, request, reply, 409);
    try {
      const email = textField(request.body, 'email') ?? '';
      const result = await beginPasskeySignup(deps, { email, email2: email, username: textField(request.body, 'username') ?? '', name: textField(request.body, 'name') ?? '', userFields: bodyObject(request.body), client: clientOf(request), submitted: submittedFields(request.body) });
      return await presentLogin(ctx, request, reply, await settleSignup(ctx, request, reply, result, loginOptionsOf(ctx)));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
  });

  api.get(PATH, {
    schema: headlessOperation('get', {
      tag: 'Authentication',
      summary: "Options for the new account's passkey",
      description: 'Creation options for a passkey; 409 unless `mfa_signup_webauthn` is pending.',
      responses: { 200: answers.WebAuthnCreationOptions, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const pending = await loginWaitingAt(ctx, request, 'mfa_signup_webauthn');
    if (!pending) return sendEnvelope(ctx, request, reply, 409);
    try {
      return await sendWebauthnOptions(ctx, request, reply, 'creation_options', await passkeySignupOptions(deps, pending.login));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
  });

  api.put(PATH, {
    schema: headlessOperation('put', {
      tag: 'Authentication',
      summary: 'Finish the signup with its passkey',
      description: 'The browser\'s new passkey (and a name) signs the person in (200); 400 for a bad one (the signup still waits); 409 unless `mfa_signup_webauthn` is pending.',
      body: bodies.AddWebAuthnAuthenticator,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const pending = await loginWaitingAt(ctx, request, 'mfa_signup_webauthn');
    if (!pending) return sendEnvelope(ctx, request, reply, 409);
    let result;
    try {
      result = await completePasskeySignup(deps, pending.login, await registrationAnswer(ctx, request), loginContextOf(ctx, request));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, result, loginOptionsOf(ctx, pending)));
  });
}
