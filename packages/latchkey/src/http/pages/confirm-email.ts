import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressForKey, confirmEmail } from '../../account/email-confirmation.js';
import { continueLogin } from '../../account/flows/login.js';
import { finishLogin } from './login.js';
import { mfaTrustTokenOf } from '../kit/mfa-trust-cookie.js';
import { currentPendingLogin } from '../kit/pending-login.js';
import { isLatchkeyError } from '../../core/errors.js';
import { flash, redirect, renderPage, type PageDeps } from './page.js';
import { clientOf } from '../kit/request-info.js';

const TITLE = 'Confirm email address';

function keyOf(request: FastifyRequest): string {
  const key = (request.params as Record<string, unknown>).key;
  return typeof key === 'string' ? key : '';
}

/**
 * The link from a confirmation email. A GET only shows which address it confirms and a button:
 * mail scanners and link previews fetch links, and a fetch must not change anything (security
 * test 17). The POST confirms. Every key that does not name a live confirmation (forged, expired,
 * used, of another purpose, blank) gets one "invalid or expired" page with status 404, as allauth.
 */
export function registerConfirmEmailPages(scope: FastifyInstance, page: PageDeps): void {
  const invalid = (request: FastifyRequest, reply: FastifyReply, error?: string) =>
    renderPage(page, request, reply, 'account/email_confirm.html', { title: TITLE, confirmation: null, error }, error === undefined ? 404 : 400);

  scope.get('/accounts/confirm-email/', (request, reply) =>
    renderPage(page, request, reply, 'account/verification_sent.html', { title: 'Verify your email address' }),
  );

  scope.get('/accounts/confirm-email/:key/', async (request, reply) => {
    const key = keyOf(request);
    const address = await addressForKey(page.deps, key);
    if (!address) return invalid(request, reply);
    const owner = await page.deps.store.users.findById(address.userId);
    if (!owner) return invalid(request, reply);
    return renderPage(page, request, reply, 'account/email_confirm.html', {
      title: TITLE,
      confirmation: { email: address.email, user_display: owner.username ?? owner.email },
      action: `/accounts/confirm-email/${encodeURIComponent(key)}/`,
    });
  });

  scope.post('/accounts/confirm-email/:key/', async (request, reply) => {
    let address;
    try {
      address = await confirmEmail(page.deps, keyOf(request), clientOf(request));
      await flash(page, request, reply, { level: 'success', text: `You have confirmed ${address.email}.` });
    } catch (error) {
      if (isLatchkeyError(error, 'invalid_key')) return invalid(request, reply);
      if (isLatchkeyError(error, 'email_taken')) {
        // Shown only to whoever holds a valid link for the address, that is, to its holder.
        return invalid(request, reply, 'This email address has already been confirmed by another account.');
      }
      throw error;
    }
    // Confirming proves the address, not the person at this browser: it signs in only a browser
    // whose login, with the right password, stopped for this very verification (allauth's
    // ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION), and only through the remaining stages.
    const pending = await currentPendingLogin(page, request);
    if (pending?.stage === 'verify_email' && pending.login.userId === address.userId) {
      const result = await continueLogin(page.deps, pending.login, { client: clientOf(request), mfaTrustToken: mfaTrustTokenOf(request) });
      if (result) return finishLogin(page, request, reply, result, { remember: pending.remember, next: pending.next });
    }
    const signedIn = await page.sessions.currentUser(request);
    return redirect(reply, signedIn ? '/accounts/email/' : '/accounts/login/');
  });
}
