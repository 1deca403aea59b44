import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import { redirect } from '../kit/html-page.js';

/**
 * For the admin's sensitive changes (granting power, a password, a secret, a deletion): unless
 * the staff member signed in or reauthenticated in the last few minutes, the account pages'
 * reauthentication (with MFA for those who have it) comes first and returns here. Returns
 * `{ response }` to send, or undefined when the change may go on. (Wrapped because a Fastify reply
 * is thenable: awaited bare, it would resolve to undefined and the change would carry on.)
 */
export async function redirectUnlessRecentlyAuthenticated(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<{ response: FastifyReply } | undefined> {
  if (await ctx.sessions.isRecentlyAuthenticated(request)) return undefined;
  return { response: redirect(reply, `/accounts/reauthenticate/?next=${encodeURIComponent(request.url)}`) };
}
