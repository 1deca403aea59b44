import type { FastifyRequest } from 'fastify';
import type { SessionDeps } from '../kit/pending-login.js';
import type { SessionTransport } from '../kit/request-sessions.js';

/**
 * The two clients of the headless API (allauth.headless): `browser`, where the session travels in
 * the session cookie and unsafe requests need the CSRF token, and `app`, where it travels in the
 * X-Session-Token header and cookies play no part.
 */
export type HeadlessClient = 'browser' | 'app';

export const SESSION_TOKEN_HEADER = 'x-session-token';

/** What every headless route is given: the flows' dependencies, the client's sessions, and which client it is. */
export interface HeadlessContext extends SessionDeps {
  client: HeadlessClient;
  /** The session token this request handed out (a new or rotated app session), to return in `meta.session_token`. */
  issuedToken(request: FastifyRequest): string | undefined;
}

/**
 * The app client's transport: the token is the session id itself (256 random bits, stored only
 * hashed, like the cookie's). A new one is returned in the response's meta, never in a cookie.
 */
export function appSessionTransport(): SessionTransport & { issuedToken(request: FastifyRequest): string | undefined } {
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
