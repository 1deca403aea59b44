import type { FastifyReply, FastifyRequest } from 'fastify';
import { logOut } from '../../account/flows/logout.js';
import type { HttpContext } from './context.js';
import { clientOf } from './request-info.js';

/**
 * Signs the request's client out, through any door: the logout flow ends the session on the
 * server (and records user_logged_out for a user's session), then the client forgets it (the
 * cookie is cleared; an app's token is dead). Returns whether a user was signed in.
 */
export async function signOut(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const session = await ctx.sessions.session(request);
  await logOut(ctx.deps, session, clientOf(request));
  ctx.sessions.forget(request, reply);
  return session?.userId != null;
}
