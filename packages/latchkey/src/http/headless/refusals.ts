import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorKind, isLatchkeyError, refusalsOf, type ErrorKind, type LatchkeyErrorCode } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { HttpContext } from '../kit/context.js';
import { sendErrors, sendReauthenticationRequired, sendUnauthenticated } from './respond.js';

/** How one route words a flow's refusal, where it differs from the defaults below. */
export interface RefusalOptions {
  /** The flow's field names as this route names them (password1 → password). */
  params?: Record<string, string>;
  /** allauth's error code for a refusal on this route (invalid_credentials → email_password_mismatch). */
  codes?: Partial<Record<LatchkeyErrorCode, string>>;
  statuses?: Partial<Record<LatchkeyErrorCode, number>>;
}

/** The status for each kind of refusal (core/errors.ts): 400, an input the person can fix, unless listed. */
const STATUS: Partial<Record<ErrorKind, number>> = {
  too_many: 429,
  unavailable: 503,
  forbidden: 403,
  conflict: 409,
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
export async function sendHeadlessRefusal(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, error: unknown, options: RefusalOptions = {}): Promise<FastifyReply> {
  if (!isLatchkeyError(error)) throw error;
  if (errorKind(error) === 'reauthenticate') {
    const user = await ctx.sessions.currentUser(request);
    return user ? sendReauthenticationRequired(ctx, request, reply, user) : sendUnauthenticated(ctx, request, reply);
  }
  if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
  const status = options.statuses?.[error.code] ?? STATUS[errorKind(error)] ?? 400;
  // Every field's refusal at once, each in allauth's `errors` entry (sendErrors gives a refusal
  // that two of the flow's fields share here, password1 and password2 → password, once).
  const errors = refusalsOf(error).map((refusal) => {
    const code = options.codes?.[refusal.code] ?? refusal.reason ?? CODE[refusal.code] ?? refusal.code;
    const param = refusal.param === undefined ? undefined : (options.params?.[refusal.param] ?? refusal.param);
    return { message: refusal.text, code, ...(param === undefined ? {} : { param }) };
  });
  return sendErrors(ctx, request, reply, status, errors);
}
