import type { FastifyRequest } from 'fastify';
import type { LoginContext } from '../../login/stages.js';
import type { HttpContext } from '../kit/context.js';
import { mfaTrustTokenOf } from '../kit/mfa-trust-cookie.js';
import { clientOf } from '../kit/request-info.js';

/**
 * Where a login through this client stands: who asks, and, for the browser client, its "trust
 * this browser" cookie and whether it may be asked to keep one (an app keeps no cookie).
 */
export function loginContextOf(ctx: HttpContext, request: FastifyRequest): LoginContext {
  const client = clientOf(request);
  return ctx.client === 'browser' ? { client, mfaTrustToken: mfaTrustTokenOf(request), canTrustBrowser: true } : { client };
}

/**
 * A headless login has no "remember me" box: the browser's session cookie lasts SESSION_COOKIE_AGE
 * unless the project asks for browser-session cookies (ACCOUNT_SESSION_REMEMBER=false).
 */
export function loginOptionsOf(ctx: HttpContext): { remember: boolean; next: string } {
  return { remember: ctx.deps.settings.ACCOUNT_SESSION_REMEMBER ?? true, next: '' };
}
