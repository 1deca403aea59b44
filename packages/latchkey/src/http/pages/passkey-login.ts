import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance } from 'fastify';
import { isLatchkeyError } from '../../core/errors.js';
import { loginWithPasskey } from '../../login/passkey.js';
import { remembersLogin } from '../../login/remember.js';
import { webauthnAuthenticationOptions } from '../../mfa/flows/webauthn.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { settleLogin } from '../kit/session-state.js';
import { credentialOfField, takeWebauthnCeremony } from '../kit/webauthn-ceremony.js';
import { renderLoginPage } from './login.js';
import { presentLogin } from './login-outcome.js';
import { formFields, formWithError, redirect, refusalStatus } from './page.js';
import { sendOptions, sendOptionsRefusal, wantsOptions } from './webauthn-options.js';

/**
 * Passkey login (MFA_PASSKEY_LOGIN_ENABLED), allauth's 2fa/webauthn/login/: the login page's
 * "Sign in with a passkey" button fetches the options here (JSON; a plain GET goes to the login
 * page, as allauth's) and posts the browser's answer back. The flow (login/passkey.ts) finds the
 * account by the passkey and runs the login's stages; a refusal is shown on the login page,
 * under the passkey's button.
 */
export function registerPasskeyLoginPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  scope.get(urls.route('mfa_login_webauthn'), async (request, reply) => {
    if (!wantsOptions(request)) return redirect(reply, urls.urlFor('account_login'));
    try {
      return await sendOptions(ctx, request, reply, 'request_options', await webauthnAuthenticationOptions(ctx.deps, 'login'));
    } catch (error) {
      return sendOptionsRefusal(ctx, request, reply, error);
    }
  });

  scope.post(urls.route('mfa_login_webauthn'), async (request, reply) => {
    const fields = formFields(request.body, ['credential', 'next']);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    let result;
    try {
      const credential = credentialOfField(fields.credential) as unknown as AuthenticationResponseJSON;
      const ceremony = await takeWebauthnCeremony(ctx, request, 'login');
      result = await loginWithPasskey(ctx.deps, { ceremony, credential, ...loginContextOf(ctx, request) });
    } catch (error) {
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      return renderLoginPage(ctx, request, reply, next, formWithError({}, error), refusalStatus(reply, error));
    }
    // "Remember me" is the password form's question: a passkey sign-in is asked nothing.
    const outcome = await settleLogin(ctx, request, reply, result, { remember: remembersLogin(ctx.deps.settings), next });
    return presentLogin(ctx, request, reply, outcome, next);
  });
}
