import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressForKey } from '../../account/email-confirmation.js';
import { verifyEmail, type EmailVerification } from '../../account/flows/verify-email.js';
import { registerConfirmEmailCodePages } from './confirm-email-code.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, type Message } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { forgetPendingLogin, loginWaitingAt, settleLogin } from '../kit/session-state.js';
import { presentLogin } from './login-outcome.js';
import { flash, redirect, renderPage } from './page.js';

const TITLE = msg('Confirm email address');

function keyOf(request: FastifyRequest): string {
  const key = (request.params as Record<string, unknown>).key;
  return typeof key === 'string' ? key : '';
}

/**
 * The link from a confirmation email. A GET only shows which address it confirms and a button:
 * mail scanners and link previews fetch links, and a fetch must not change anything, or a scanner
 * would confirm an address nobody chose to confirm. The POST confirms. Every key that does not name
 * a live confirmation (forged, expired, used, of another purpose, blank) gets one "invalid or
 * expired" page with status 404, as allauth.
 */
export function registerConfirmEmailPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const invalid = (request: FastifyRequest, reply: FastifyReply, error?: Message) =>
    renderPage(ctx, request, reply, 'account/email_confirm.html', { title: TITLE, confirmation: null, error }, error === undefined ? 404 : 400);

  // Under verification by code this page takes the mailed code (confirm-email-code.ts).
  if (ctx.deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED) registerConfirmEmailCodePages(scope, ctx);
  else {
    scope.get(urls.route('account_email_verification_sent'), (request, reply) =>
      renderPage(ctx, request, reply, 'account/verification_sent.html', { title: msg('Verify your email address') }),
    );
  }

  scope.get(urls.route('account_confirm_email'), async (request, reply) => {
    const key = keyOf(request);
    const address = await addressForKey(ctx.deps, key);
    if (!address) return invalid(request, reply);
    const owner = await ctx.deps.store.users.findById(address.userId);
    if (!owner) return invalid(request, reply);
    return renderPage(ctx, request, reply, 'account/email_confirm.html', {
      title: TITLE,
      confirmation: { email: address.email, user_display: owner.username ?? owner.email },
      action: urls.urlFor('account_confirm_email', { key }),
    });
  });

  scope.post(urls.route('account_confirm_email'), async (request, reply) => {
    const waiting = await loginWaitingAt(ctx, request, 'verify_email');
    let verification: EmailVerification;
    try {
      verification = await verifyEmail(ctx.deps, { key: keyOf(request), waitingLogin: waiting?.login, context: loginContextOf(ctx, request) });
      await flash(ctx, request, reply, { level: 'success', text: msg('You have confirmed {email}.', { email: verification.address.email }) });
    } catch (error) {
      if (isLatchkeyError(error, 'invalid_key')) return invalid(request, reply);
      if (isLatchkeyError(error, 'email_taken')) {
        // Shown only to whoever holds a valid link for the address, that is, to its holder.
        return invalid(request, reply, msg('This email address has already been confirmed by another account.'));
      }
      throw error;
    }
    // The flow carried on this browser's login only if it waited for this very address's user.
    if (waiting && verification.login) {
      const outcome = await settleLogin(ctx, request, reply, verification.login, { remember: waiting.remember, next: waiting.next });
      if (outcome.kind !== 'ended') return presentLogin(ctx, request, reply, outcome, waiting.next);
    } else if (verification.endsWaitingLogin) {
      // ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION is off: the login waited only for this, and the person
      // now signs in on the login page.
      await forgetPendingLogin(ctx, request);
    }
    const signedIn = await ctx.sessions.currentUser(request);
    return redirect(reply, urls.urlFor(signedIn ? 'account_email' : 'account_login'));
  });
}
