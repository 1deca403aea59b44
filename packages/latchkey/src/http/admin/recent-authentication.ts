import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import { redirect } from '../kit/html-page.js';

/**
 * How the admin's pages present an admin flow's 'reauthentication_required' (a sensitive change
 * after a stale sign-in: admin/flows/): the account pages' reauthentication, with MFA for those
 * who have it, which returns here. The rule is the flows'; a page only shows the way through it.
 */
export function reauthenticateFirst(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return redirect(reply, ctx.deps.urls.urlFor('account_reauthenticate', {}, { next: request.url }));
}

/**
 * For a page that leads to a sensitive change (a form where a key will be made, a confirmation
 * before a bulk deletion): the same reauthentication asked before the page rather than after it,
 * so nothing typed is lost on the way. The flow asks again when the change is made. Returns
 * `{ response }` to send, or undefined when the page may go on. (Wrapped because a Fastify reply
 * is thenable: awaited bare, it would resolve to undefined and the page would carry on.)
 */
export async function redirectUnlessRecentlyAuthenticated(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<{ response: FastifyReply } | undefined> {
  if (await ctx.sessions.isRecentlyAuthenticated(request)) return undefined;
  return { response: reauthenticateFirst(ctx, request, reply) };
}
