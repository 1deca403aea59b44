import { msg } from '../../core/i18n/message.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { lookUpVerificationCode, resendVerificationCode, verifyEmailWithCode } from '../../account/flows/verify-email.js';
import { INCORRECT_VERIFICATION_CODE } from '../../account/email-confirmation.js';
import { isLatchkeyError } from '../../core/errors.js';
import type { HttpContext } from '../kit/context.js';
import { forgetVerificationCode, heldVerificationCode, keepVerificationCode } from '../kit/email-code-state.js';
import { textField } from '../kit/input.js';
import { loginContextOf } from '../kit/login-context.js';
import { clientOf } from '../kit/request-info.js';
import { forgetSignupAwaitingVerification, loginWaitingAt, replacePendingLoginState, settleLogin } from '../kit/session-state.js';
import { loginOptionsOf } from './login-options.js';
import { sendHeadlessRefusal } from './refusals.js';
import { presentLogin, sendAuthenticated, sendEnvelope, sendErrors, sendOk, sendUnauthenticated } from './respond.js';
import { userData } from './user.js';

const KEY_HEADER = 'x-email-verification-key';
const INCORRECT = [{ message: INCORRECT_VERIFICATION_CODE, code: 'incorrect_code', param: 'key' }];
const CONFIRMED_ELSEWHERE = msg('This email address has already been confirmed by another account.');

/**
 * auth/email/verify and auth/email/verify/resend under verification by code
 * (ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED), as allauth's: the `key` is the mailed code, and it
 * works only in the session whose login (or signed-in user) it was mailed for
 * (account/flows/verify-email.ts). 409 when no code is pending here; 400 `incorrect_code` for a
 * wrong one. A code that is expired or out of tries ends what it was for: the waiting login (401,
 * sign in again, which mails a new code), or the signed-in user's pending code (409, ask again).
 */
async function pendingOf(ctx: HttpContext, request: FastifyRequest) {
  const waiting = await loginWaitingAt(ctx, request, 'verify_email');
  const held = await heldVerificationCode(ctx, request);
  const user = await ctx.sessions.currentUser(request);
  return { waiting, held, user, input: { waitingLogin: waiting?.login, held, signedInUserId: user?.id } };
}

/** GET: what the code verifies, and whether it carries this session's login on; the look takes a try. */
export async function lookUpCode(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { input } = await pendingOf(ctx, request);
  const key = request.headers[KEY_HEADER];
  const lookup = await lookUpVerificationCode(ctx.deps, { ...input, code: typeof key === 'string' ? key : '', client: clientOf(request) });
  if (lookup.status === 'none' || lookup.status === 'expired') return sendEnvelope(ctx, request, reply, 409);
  if (lookup.status === 'incorrect') return sendErrors(ctx, request, reply, 400, INCORRECT);
  return sendOk(ctx, request, reply, { data: { email: lookup.email, user: userData(ctx.deps, lookup.user) }, meta: { is_authenticating: lookup.authenticating } });
}

/** POST: the code, verifying the address and carrying the waiting login on. */
export async function verifyByCode(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { waiting, held, user, input } = await pendingOf(ctx, request);
  let verification;
  try {
    verification = await verifyEmailWithCode(ctx.deps, { ...input, code: textField(request.body, 'key') ?? '', context: loginContextOf(ctx, request) });
  } catch (error) {
    // Only whoever holds the right code for the address learns this, that is, its holder.
    if (isLatchkeyError(error, 'email_taken')) return sendErrors(ctx, request, reply, 400, [{ message: CONFIRMED_ELSEWHERE, code: 'email_taken', param: 'key' }]);
    return sendHeadlessRefusal(ctx, request, reply, error);
  }
  switch (verification.status) {
    case 'none':
      return sendEnvelope(ctx, request, reply, 409);
    case 'incorrect':
      return sendErrors(ctx, request, reply, 400, INCORRECT);
    case 'login':
      return presentLogin(ctx, request, reply, await settleLogin(ctx, request, reply, verification.result, loginOptionsOf(ctx, waiting)));
    case 'confirmed':
      await forgetVerificationCode(ctx, request);
      return user ? sendAuthenticated(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
    case 'expired':
      await forgetVerificationCode(ctx, request);
      if (held?.userId !== null) return sendEnvelope(ctx, request, reply, 409);
      // A signup whose address had an account ends as a new account's login does when its code runs out.
      await forgetSignupAwaitingVerification(ctx, request);
      return sendUnauthenticated(ctx, request, reply);
  }
}

/** POST resend: a new code in place of the pending one, within the confirm_email limit. */
export async function resendCode(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { waiting, input } = await pendingOf(ctx, request);
  let resent;
  try {
    resent = await resendVerificationCode(ctx.deps, { ...input, client: clientOf(request) });
  } catch (error) {
    return sendHeadlessRefusal(ctx, request, reply, error);
  }
  if ('waitingLogin' in resent) {
    if (waiting) await replacePendingLoginState(ctx, request, reply, waiting, resent.waitingLogin);
  } else if ('held' in resent) {
    await keepVerificationCode(ctx, request, reply, resent.held);
  } else {
    return sendEnvelope(ctx, request, reply, 409);
  }
  return sendOk(ctx, request, reply);
}
