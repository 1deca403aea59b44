import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressForKey, confirmEmail } from '../../account/email-confirmation.js';
import { resendLoginVerification } from '../../account/flows/manage-email.js';
import { continueLogin } from '../../account/flows/login.js';
import { isLatchkeyError } from '../../core/errors.js';
import type { EmailAddress } from '../../account/model.js';
import { clientOf } from '../kit/request-info.js';
import { mfaTrustTokenOf } from '../kit/mfa-trust-cookie.js';
import { clearPendingLogin, currentPendingLogin, type PendingLogin } from '../kit/pending-login.js';
import { completeLogin } from './complete-login.js';
import type { HeadlessContext } from './context.js';
import { clearSignupVerificationPending } from './pending-flows.js';
import { stringField } from './input.js';
import { sendRefusal } from './refusals.js';
import { sendAuthenticated, sendEnvelope, sendErrors, sendOk, sendUnauthenticated } from './respond.js';
import { userData } from './user.js';

const KEY_HEADER = 'x-email-verification-key';
const INVALID_KEY = 'This confirmation link is invalid or has expired.';
const CONFIRMED_ELSEWHERE = 'This email address has already been confirmed by another account.';

/** The login this session keeps waiting at the verify_email stage, if any. */
async function pendingVerification(ctx: HeadlessContext, request: FastifyRequest): Promise<PendingLogin | undefined> {
  const pending = await currentPendingLogin(ctx, request);
  return pending?.stage === 'verify_email' ? pending : undefined;
}

/**
 * auth/email/verify (GET: what a key confirms; POST: confirm it) and auth/email/verify/resend, over
 * the flows the confirmation pages call. As there, confirming proves the address, not the person
 * holding this session: it signs in only a session whose login, with the right password, stopped
 * for this very user's verification, and only through the stages that remain.
 */
export function registerEmailVerificationRoutes(api: FastifyInstance, ctx: HeadlessContext): void {
  const { deps } = ctx;
  const invalidKey = (request: FastifyRequest, reply: FastifyReply) => sendErrors(ctx, request, reply, 400, [{ message: INVALID_KEY, code: 'invalid', param: 'key' }]);
  /** The browser's "trust" cookie; apps have none (the trust flow is the browser's). */
  const trustToken = (request: FastifyRequest) => (ctx.client === 'browser' ? mfaTrustTokenOf(request) : undefined);

  // A GET only reads: link scanners and previews fetch what they find, and must change nothing.
  api.get('/auth/email/verify', async (request, reply) => {
    const key = request.headers[KEY_HEADER];
    const address = typeof key === 'string' ? await addressForKey(deps, key) : undefined;
    const owner = address ? await deps.store.users.findById(address.userId) : undefined;
    if (!address || !owner) return invalidKey(request, reply);
    const pending = await pendingVerification(ctx, request);
    return sendOk(ctx, request, reply, {
      data: { email: address.email, user: userData(deps.settings, owner) },
      meta: { is_authenticating: pending?.login.userId === owner.id },
    });
  });

  api.post('/auth/email/verify', async (request, reply) => {
    const client = clientOf(request);
    let address: EmailAddress;
    try {
      address = await confirmEmail(deps, stringField(request.body, 'key') ?? '', client);
    } catch (error) {
      if (isLatchkeyError(error, 'invalid_key')) return invalidKey(request, reply);
      // Only whoever holds a valid link for the address learns this, that is, its holder.
      if (isLatchkeyError(error, 'email_taken')) return sendErrors(ctx, request, reply, 400, [{ message: CONFIRMED_ELSEWHERE, code: 'email_taken', param: 'key' }]);
      return sendRefusal(ctx, request, reply, error);
    }
    const pending = await pendingVerification(ctx, request);
    if (pending?.login.userId === address.userId) {
      const result = await continueLogin(deps, pending.login, { client, mfaTrustToken: trustToken(request) });
      if (result) return completeLogin(ctx, request, reply, result);
      // The password changed since the login began: that login can never finish.
      await clearPendingLogin(ctx, request);
    }
    await clearSignupVerificationPending(ctx, request);
    const user = await ctx.sessions.currentUser(request);
    return user ? sendAuthenticated(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
  });

  api.post('/auth/email/verify/resend', async (request, reply) => {
    const pending = await pendingVerification(ctx, request);
    if (!pending) return sendEnvelope(ctx, request, reply, 409);
    try {
      await resendLoginVerification(deps, { userId: pending.login.userId, client: clientOf(request) });
    } catch (error) {
      return sendRefusal(ctx, request, reply, error);
    }
    return sendOk(ctx, request, reply);
  });
}
