import { msg } from '../../core/i18n/message.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressForKey } from '../../account/email-confirmation.js';
import { resendLoginVerification, WAIT_BEFORE_RESENDING } from '../../account/flows/manage-email.js';
import { verifyEmail, type EmailVerification } from '../../account/flows/verify-email.js';
import { isLatchkeyError } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { HttpContext } from '../kit/context.js';
import { textField } from '../kit/input.js';
import { clientOf } from '../kit/request-info.js';
import { forgetPendingLogin, forgetSignupAwaitingVerification, loginWaitingAt, settleLogin, signupAwaitingVerification } from '../kit/session-state.js';
import { loginContextOf } from '../kit/login-context.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendAuthenticated, sendEnvelope, sendErrors, sendOk, sendUnauthenticated } from './respond.js';
import { userData } from './user.js';
import { lookUpCode, resendCode, verifyByCode } from './email-verification-code.js';
import { answers, bodies, headlessOperation, REFUSALS } from './operation-schema.js';

const KEY_HEADER = 'x-email-verification-key';
const CONFIRMED_ELSEWHERE = msg('This email address has already been confirmed by another account.');

/**
 * auth/email/verify (GET: what a key confirms; POST: confirm it) and auth/email/verify/resend, over
 * the flows the confirmation pages call. As there, confirming proves the address, not the person
 * holding this session: it signs in only a session whose login, with the right password, stopped
 * for this very user's verification, and only through the stages that remain. Under verification
 * by code the same routes take the mailed code instead (email-verification-code.ts).
 */
export function registerEmailVerificationRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;
  const byCode = deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED;
  const invalidKey = (request: FastifyRequest, reply: FastifyReply) => sendErrors(ctx, request, reply, 400, [{ ...REFUSALS.confirmationKey, param: 'key' }]);

  // A GET only reads: link scanners and previews fetch what they find, and must change nothing.
  api.get('/auth/email/verify', {
    schema: headlessOperation('get', {
      tag: 'Email verification',
      summary: 'Look up a verification key',
      description: 'Which address and account a mailed key confirms, without confirming it: link scanners may fetch a link, and must change nothing. `is_authenticating` says whether confirming it will continue this session\'s login. With verification by code (`email_verification_by_code_enabled`) the key is the mailed code, pending in this session only (409 when none is): the look uses one of its tries, and a wrong one is 400 `incorrect_code`.',
      parameters: ['EmailVerificationKey'],
      responses: { 200: answers.EmailVerificationInfo, 400: answers.Error, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    if (byCode) return lookUpCode(ctx, request, reply);
    const key = request.headers[KEY_HEADER];
    const address = typeof key === 'string' ? await addressForKey(deps, key) : undefined;
    const owner = address ? await deps.store.users.findById(address.userId) : undefined;
    if (!address || !owner) return invalidKey(request, reply);
    const pending = await loginWaitingAt(ctx, request, 'verify_email');
    return sendOk(ctx, request, reply, {
      data: { email: address.email, user: userData(deps, owner) },
      meta: { is_authenticating: pending?.login.userId === owner.id },
    });
  });

  api.post('/auth/email/verify', {
    schema: headlessOperation('post', {
      tag: 'Email verification',
      summary: 'Confirm an address',
      description: 'Confirms the address the key names. A login of that account waiting in this session for the confirmation continues (200, or 401 at its next step); otherwise the answer is the session\'s state: 200 if someone is signed in, else 401. With verification by code the key is the mailed code, which works only in the session it was mailed for (the login waiting at `verify_email`, which a right code always continues, or the signed-in user\'s session for an added address), once, for a few minutes and a few tries: 400 `incorrect_code` for a wrong one; a code expired or out of tries ends the waiting login (401) or is dropped (409); 409 when no code is pending.',
      body: bodies.VerifyEmail,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    if (byCode) return verifyByCode(ctx, request, reply);
    const waiting = await loginWaitingAt(ctx, request, 'verify_email');
    let verification: EmailVerification;
    try {
      verification = await verifyEmail(deps, { key: textField(request.body, 'key') ?? '', waitingLogin: waiting?.login, context: loginContextOf(ctx, request) });
    } catch (error) {
      if (isLatchkeyError(error, 'invalid_key')) return invalidKey(request, reply);
      // Only whoever holds a valid link for the address learns this, that is, its holder.
      if (isLatchkeyError(error, 'email_taken')) return sendErrors(ctx, request, reply, 400, [{ message: CONFIRMED_ELSEWHERE, code: 'email_taken', param: 'key' }]);
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    // The flow carried on this session's login only if it waited for this very address's user.
    if (verification.login) {
      const outcome = await settleLogin(ctx, request, reply, verification.login, loginOptionsOf(ctx, waiting));
      if (outcome.kind !== 'ended') return presentLogin(ctx, request, reply, outcome);
    } else if (verification.endsWaitingLogin) {
      // ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION is off: the login waited only for this, and is over.
      await forgetPendingLogin(ctx, request);
    }
    await forgetSignupAwaitingVerification(ctx, request);
    const user = await ctx.sessions.currentUser(request);
    return user ? sendAuthenticated(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
  });

  api.post('/auth/email/verify/resend', {
    schema: headlessOperation('post', {
      tag: 'Email verification',
      summary: 'Send the verification mail again',
      description: 'For a login waiting for its address to be confirmed, or with verification by code for the code pending in this session (a new code replaces it); 409 when none is.',
      limited: true,
      busy: true,
      responses: { 200: answers.StatusOK, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    if (byCode) return resendCode(ctx, request, reply);
    const pending = await loginWaitingAt(ctx, request, 'verify_email');
    if (!pending) return resendForSignupWait(ctx, request, reply);
    try {
      await resendLoginVerification(deps, { userId: pending.login.userId, client: clientOf(request) });
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    return sendOk(ctx, request, reply);
  });
}

/**
 * A resend in a session whose signup named an address that already had an account: no login waits
 * (no account was created), but the answer must be the one a new account's signup gets, or the
 * endpoint would tell which it was. The same confirm_email limit on the address is counted (the
 * signup's notice to the owner counted it first), and nothing is mailed: the owner was told once.
 */
async function resendForSignupWait(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const email = await signupAwaitingVerification(ctx, request);
  if (email === undefined) return sendEnvelope(ctx, request, reply, 409);
  const limit = await ctx.deps.rateLimits.consume('confirm_email', { ip: clientOf(request).ip, key: email });
  if (!limit.allowed) return sendHeadlessRefusal(ctx, request, reply, new RateLimitedError('confirm_email', Math.max(1, limit.retryAfterSeconds), WAIT_BEFORE_RESENDING));
  return sendOk(ctx, request, reply);
}
