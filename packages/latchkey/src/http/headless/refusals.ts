import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError, type LatchkeyErrorCode } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { HeadlessContext } from './context.js';
import { sendErrors, sendReauthenticationRequired, sendUnauthenticated } from './respond.js';

/** How one route words a flow's refusal, where it differs from the defaults below. */
export interface RefusalOptions {
  /** The flow's field names as this route names them (password1 → password). */
  params?: Record<string, string>;
  /** allauth's error code for a refusal on this route (invalid_credentials → email_password_mismatch). */
  codes?: Partial<Record<LatchkeyErrorCode, string>>;
  statuses?: Partial<Record<LatchkeyErrorCode, number>>;
}

/** 400 unless the refusal is of another kind: too many attempts, a busy server, a closed door, a conflict. */
const STATUS: Partial<Record<LatchkeyErrorCode, number>> = {
  rate_limited: 429,
  server_busy: 503,
  mail_failed: 503,
  signup_closed: 403,
  authenticator_exists: 409,
  email_unverified: 409,
};

/** allauth's codes where a flow's code differs; a finer `reason` (Django's validator codes) wins over both. */
const CODE: Partial<Record<LatchkeyErrorCode, string>> = {
  invalid_email: 'invalid',
  invalid_username: 'invalid',
  invalid_input: 'invalid',
  invalid_key: 'invalid',
  rate_limited: 'too_many_requests',
};

/**
 * Answers a flow's refusal in the API's shape. The message is the flow's own (written for people,
 * free of internals); anything that is not a flow's refusal is rethrown, to the error handler.
 */
export async function sendRefusal(ctx: HeadlessContext, request: FastifyRequest, reply: FastifyReply, error: unknown, options: RefusalOptions = {}): Promise<FastifyReply> {
  if (!isLatchkeyError(error)) throw error;
  if (error.code === 'reauthentication_required') {
    const user = await ctx.sessions.currentUser(request);
    return user ? sendReauthenticationRequired(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
  }
  if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
  const status = options.statuses?.[error.code] ?? STATUS[error.code] ?? 400;
  const code = options.codes?.[error.code] ?? error.reason ?? CODE[error.code] ?? error.code;
  const param = error.param === undefined ? undefined : (options.params?.[error.param] ?? error.param);
  return sendErrors(ctx, request, reply, status, [{ message: error.message, code, ...(param === undefined ? {} : { param }) }]);
}
