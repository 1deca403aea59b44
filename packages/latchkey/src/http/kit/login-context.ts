import type { FastifyRequest } from 'fastify';
import type { LoginContext } from '../../login/stages.js';
import type { HttpContext } from './context.js';
import { mfaTrustTokenOf } from './mfa-trust-cookie.js';
import { clientOf } from './request-info.js';

/**
 * What the login stages are told of a request, for every door: who asks, and, for a browser, its
 * "trust this browser" cookie and that it may be asked to keep one. An app or a token client keeps
 * no cookie: it is neither trusted as a browser nor asked to be.
 */
export function loginContextOf(ctx: Pick<HttpContext, 'client'>, request: FastifyRequest): LoginContext {
  const client = clientOf(request);
  return ctx.client === 'browser' ? { client, mfaTrustToken: mfaTrustTokenOf(request), canTrustBrowser: true } : { client };
}
