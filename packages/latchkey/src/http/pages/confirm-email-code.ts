import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { resendVerificationCode, verifyEmailWithCode, type CodeVerification } from '../../account/flows/verify-email.js';
import { INCORRECT_VERIFICATION_CODE } from '../../account/email-confirmation.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { remembersLogin } from '../../login/remember.js';
import type { HttpContext } from '../kit/context.js';
import { forgetVerificationCode, heldVerificationCode, keepVerificationCode } from '../kit/email-code-state.js';
import { loginContextOf } from '../kit/login-context.js';
import { clientOf } from '../kit/request-info.js';
import { forgetSignupAwaitingVerification, loginWaitingAt, replacePendingLoginState, settleLogin } from '../kit/session-state.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState } from './page.js';

const TITLE = msg('Confirm your email address');
const SIGN_IN_AGAIN = msg('The code has expired or was used up. Sign in again to have a new one sent.');
const ASK_AGAIN = msg('The code has expired or was used up. Ask for a new one.');

/**
 * /accounts/confirm-email/ under verification by code (allauth's "enter the code" page): the code
 * mailed for this browser's login waiting at verify_email, for an address the signed-in user
 * added, or for a signup (account/flows/verify-email.ts). A right code verifies the address; the
 * waiting login then carries on (MFA still asked for) and signs the person in. "Send a new code"
 * replaces the pending code, within the confirm_email limit. A form post needs the CSRF token, as
 * every form does.
 */
export function registerConfirmEmailCodePages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const page = urls.route('account_email_verification_sent');
  /** What this browser has pending: the waiting login, the held code, who is signed in; and the address to name. */
  async function pendingOf(request: FastifyRequest) {
    const waiting = await loginWaitingAt(ctx, request, 'verify_email');
    const held = await heldVerificationCode(ctx, request);
    const user = await ctx.sessions.currentUser(request);
    const ownHeld = held !== undefined && (held.userId === null || held.userId === user?.id) ? held : undefined;
    const email = waiting ? waiting.login.code?.email : ownHeld?.state.email;
    return { waiting, held, user, pending: waiting !== undefined || ownHeld !== undefined, email };
  }

  const codeForm = (request: FastifyRequest, reply: FastifyReply, email: string | undefined, form: FormState = emptyForm(), status = 200): Promise<FastifyReply> =>
    renderPage(ctx, request, reply, 'account/confirm_email_verification_code.html', { title: TITLE, form, email }, status);

  scope.get(page, async (request, reply) => {
    const { pending, email } = await pendingOf(request);
    if (pending) return codeForm(request, reply, email);
    return renderPage(ctx, request, reply, 'account/verification_sent.html', { title: msg('Verify your email address') });
  });

  scope.post(page, async (request, reply) => {
    const { waiting, held, user, pending, email } = await pendingOf(request);
    if (!pending) return redirect(reply, urls.urlFor(user ? 'account_email' : 'account_login'));
    const fields = formFields(request.body, ['code', 'action_resend']);
    const input = { waitingLogin: waiting?.login, held, signedInUserId: user?.id };
    if (fields.action_resend !== '') {
      try {
        const resent = await resendVerificationCode(ctx.deps, { ...input, client: clientOf(request) });
        if ('waitingLogin' in resent && waiting) await replacePendingLoginState(ctx, request, reply, waiting, resent.waitingLogin);
        else if ('held' in resent) await keepVerificationCode(ctx, request, reply, resent.held);
      } catch (error) {
        return codeForm(request, reply, email, formWithError({}, error), refusalStatus(reply, error));
      }
      await flash(ctx, request, reply, { level: 'info', text: email === undefined ? msg('A new code has been sent.') : msg('A new code has been sent to {email}.', { email }) });
      return redirect(reply, urls.urlFor('account_email_verification_sent'));
    }
    let verification: CodeVerification;
    try {
      verification = await verifyEmailWithCode(ctx.deps, { ...input, code: fields.code, context: loginContextOf(ctx, request) });
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      return codeForm(request, reply, email, formWithError({}, error), refusalStatus(reply, error));
    }
    switch (verification.status) {
      case 'none':
        return redirect(reply, urls.urlFor(user ? 'account_email' : 'account_login'));
      case 'incorrect':
        return codeForm(request, reply, email, { values: {}, errors: { code: [INCORRECT_VERIFICATION_CODE] } }, 400);
      case 'login': {
        const outcome = await settleLogin(ctx, request, reply, verification.result, { remember: waiting?.remember ?? remembersLogin(ctx.deps.settings), next: waiting?.next ?? '' });
        if (outcome.kind === 'ended') {
          await flash(ctx, request, reply, { level: 'error', text: SIGN_IN_AGAIN });
          return redirect(reply, urls.urlFor('account_login'));
        }
        return presentLogin(ctx, request, reply, outcome, waiting?.next ?? '');
      }
      case 'confirmed':
        await forgetVerificationCode(ctx, request);
        await flash(ctx, request, reply, { level: 'success', text: msg('You have confirmed {email}.', { email: verification.address.email }) });
        return redirect(reply, urls.urlFor('account_email'));
      case 'expired':
        await forgetVerificationCode(ctx, request);
        if (held?.userId === null) {
          // A signup whose address had an account ends as a new account's login does when its code runs out.
          await forgetSignupAwaitingVerification(ctx, request);
          await flash(ctx, request, reply, { level: 'error', text: SIGN_IN_AGAIN });
          return redirect(reply, urls.urlFor('account_login'));
        }
        await flash(ctx, request, reply, { level: 'error', text: ASK_AGAIN });
        return redirect(reply, urls.urlFor('account_email'));
    }
  });
}
