import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import type { HttpContext } from '../kit/context.js';
import { redirect } from '../kit/html-page.js';

// The pages' share of the server-rendered kit, under the names the pages have always used.
export { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FlashMessage, type FormState } from '../kit/html-page.js';

/**
 * For pages that change credentials or addresses: unless the user logged in or reauthenticated
 * within the last 5 minutes, sends them to the reauthentication page, which returns here. Returns
 * `{ response }` to send, or undefined when the page may go on. (The reply is wrapped because a
 * Fastify reply is thenable: returned bare from an async function, awaiting it would resolve to
 * undefined and the caller would carry on with the change.)
 */
export async function redirectUnlessRecentlyAuthenticated(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<{ response: FastifyReply } | undefined> {
  if (await ctx.sessions.isRecentlyAuthenticated(request)) return undefined;
  // A form's action is its own page, so a refused POST returns to the page, not to a replay.
  return { response: redirect(reply, ctx.deps.urls.urlFor('account_reauthenticate', {}, { next: request.url })) };
}

/** For pages only a signed-in user may see: the user, or a redirect to the login page (which returns here). */
export async function requireUser(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<{ user: User } | { response: FastifyReply }> {
  const user = await ctx.sessions.currentUser(request);
  if (user) return { user };
  return { response: redirect(reply, ctx.deps.urls.urlFor('account_login', {}, { next: request.url })) };
}

/**
 * Where a signed-in person is sent from a page meant for strangers (the login, the signup): the
 * `next` they came with, or where the adapter lands a login. Undefined for a stranger.
 */
export async function signedInLanding(ctx: HttpContext, request: FastifyRequest, next: string): Promise<string | undefined> {
  const user = await ctx.sessions.currentUser(request);
  return user === undefined ? undefined : next || ctx.deps.adapter.getLoginRedirectUrl(user);
}
