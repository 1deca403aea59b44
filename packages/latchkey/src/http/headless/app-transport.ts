import type { FastifyRequest } from 'fastify';
import type { SessionTransport } from '../kit/request-sessions.js';

export const SESSION_TOKEN_HEADER = 'x-session-token';

/**
 * The app client's transport (allauth.headless's `app` client): the token is the session id
 * itself (256 random bits, stored only hashed, like the cookie's), sent in X-Session-Token. A new
 * one is returned in the response's meta, never in a cookie; cookies play no part.
 */
export function appSessionTransport(): SessionTransport {
  const issued = new WeakMap<FastifyRequest, string | undefined>();
  return {
    read(request) {
      const token = request.headers[SESSION_TOKEN_HEADER];
      return typeof token === 'string' ? token : undefined;
    },
    issue(request, _reply, id) {
      issued.set(request, id);
    },
    clear(request) {
      issued.set(request, undefined);
    },
    privilegeChanged() {
      // No CSRF for apps: nothing but the token authenticates them.
    },
    issuedToken: (request) => issued.get(request),
  };
}

/** Whether an app request named a session token at all (a dead one is answered with 410). */
export function sentSessionToken(request: FastifyRequest): boolean {
  return request.headers[SESSION_TOKEN_HEADER] !== undefined;
}
