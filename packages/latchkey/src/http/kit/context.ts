import type { LatchkeyDeps } from '../../deps.js';
import type { RequestSessions } from './request-sessions.js';

/**
 * Who a front door serves: a `browser` (the session in a cookie; unsafe requests need the CSRF
 * token; a "trust this browser" cookie can be kept) or an `app` (allauth.headless's app client:
 * the session in the X-Session-Token header, no cookies at all).
 */
export type HttpClient = 'browser' | 'app';

/**
 * What every route of every front door (the pages, the headless API's two clients, the token
 * API) is given: the flows' dependencies, the sessions as this door carries them, and its client.
 */
export interface HttpContext {
  deps: LatchkeyDeps;
  sessions: RequestSessions;
  client: HttpClient;
}
