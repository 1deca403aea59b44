import type { FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { msgid } from '../../core/i18n/message.js';
import { userForApiToken } from '../../tokens/api-tokens.js';
import type { HttpContext } from '../kit/context.js';
import { csrfFailure, csrfOptionsFrom } from '../kit/csrf.js';
import { tokenHeaderOf } from './token-header.js';

/**
 * Which authentication classes a view uses, as DRF's `authentication_classes`: the default pair
 * (token, then session), the token alone (revoking a token), or none (obtaining one: the
 * credentials are in the body, and a cookie must not make the request need a CSRF token).
 */
export type ApiAuthenticationMode = 'token_and_session' | 'token' | 'none';

export type ApiAuthentication =
  | { kind: 'anonymous' }
  | { kind: 'token'; user: User }
  | { kind: 'session'; user: User }
  /** Credentials that were sent but do not hold: 401, or 403 for a failed CSRF check. The detail is a message id, translated when sent. */
  | { kind: 'refused'; status: 401 | 403; detail: string };

/** DRF's TokenAuthentication message; a string, as clients and tests compare it (translated when sent). */
export const INVALID_TOKEN = msgid('Invalid token.');
/** Far longer than any key Latchkey issues: a longer one is refused without a database lookup. */
const MAX_KEY_LENGTH = 256;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/**
 * DRF's authentication, in the order of cookiecutter-django's classes as the contract fixes it:
 * TokenAuthentication first (a request that sends a token is judged by it alone, and a bad one is
 * refused even when a session cookie would have done), then SessionAuthentication.
 *
 * The session authenticates only a fully logged-in user: a browser stopped at the MFA step (its
 * session holds a pending login, not a user) is anonymous here, or a password alone would open the API. As
 * DRF does, a session-authenticated unsafe request must pass the CSRF check, since a browser sends
 * the cookie on requests other sites make it send; a token request needs none, since no browser
 * attaches the header by itself.
 */
export async function authenticateApiRequest(ctx: HttpContext, request: FastifyRequest, mode: ApiAuthenticationMode): Promise<ApiAuthentication> {
  if (mode === 'none') return { kind: 'anonymous' };
  const header = tokenHeaderOf(request);
  if (header.kind === 'malformed') return { kind: 'refused', status: 401, detail: header.detail };
  if (header.kind === 'key') {
    // Unknown, deleted, or belonging to a deactivated account: the same answer, at once.
    const user = header.key.length <= MAX_KEY_LENGTH ? await userForApiToken(ctx.deps, header.key) : undefined;
    return user ? { kind: 'token', user } : { kind: 'refused', status: 401, detail: INVALID_TOKEN };
  }
  if (mode === 'token') return { kind: 'anonymous' };
  const user = await ctx.sessions.currentUser(request);
  if (!user) return { kind: 'anonymous' };
  if (!SAFE_METHODS.has(request.method)) {
    const failure = csrfFailure(request, csrfOptionsFrom(ctx.deps.settings));
    if (failure !== undefined) {
      request.log.warn({ reason: failure }, 'CSRF check failed');
      // A developer's mistake, not a person's: English, as DRF's `CSRF Failed: %s` and Django's reasons are.
      return { kind: 'refused', status: 403, detail: `CSRF Failed: ${failure}` };
    }
  }
  return { kind: 'session', user };
}
