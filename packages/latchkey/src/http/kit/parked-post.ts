/**
 * A cross-site POST parked for a same-site GET. An identity provider that answers with a POST
 * from its own site (a SAML IdP at the ACS, Apple's response_mode=form_post callback) reaches us
 * without the SameSite=Lax session cookie, so the sign-in it belongs to cannot be found yet. What
 * it posted is kept server-side for a minute, in a short-lived anonymous session whose id goes in
 * a cookie only the finish URL receives, and the browser is sent there: that GET is same-site,
 * carries the session, and takes the parked fields once.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpContext } from './context.js';
import { msg } from '../../core/i18n/message.js';
import { clientOf } from './request-info.js';
import { inRequestLanguage } from './request-language.js';

/** How long a parked POST waits for its finish URL. */
export const PARKED_SECONDS = 60;

/** Where one kind of POST is parked: the cookie's name, the key in the anonymous session, and the finish URL (the cookie's path). */
export interface ParkingSpot {
  cookie: string;
  key: string;
  finishPath: string;
}

/**
 * Each parked POST counts as a sign-in attempt under the login limit: it stores something, so a
 * flood of them is refused. Past the limit this answers 429 and returns true: the caller then
 * returns the reply as it is and parks nothing. It returns whether it answered, never the reply
 * itself: a Fastify reply is thenable, so an async function returning it resolves to undefined
 * once it is sent, and the caller would carry on and answer a second time.
 */
export async function answeredOverLoginLimit(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const attempt = await ctx.deps.rateLimits.consume('login', { ip: clientOf(request).ip });
  if (attempt.allowed) return false;
  reply
    .code(429)
    .header('retry-after', String(attempt.retryAfterSeconds))
    .header('cache-control', 'no-store')
    .type('text/plain; charset=utf-8')
    .send(inRequestLanguage(request, msg('Too many sign-in attempts. Try again later.')));
  return true;
}

/** Parks `value` for PARKED_SECONDS under a cookie scoped to the finish URL, and sends the browser there (303: the GET that follows a POST). */
export async function parkPost(ctx: HttpContext, reply: FastifyReply, spot: ParkingSpot, value: object): Promise<FastifyReply> {
  const { deps } = ctx;
  const expiresAt = new Date(deps.clock.now().getTime() + PARKED_SECONDS * 1000);
  const session = await deps.sessions.create({ userId: null, data: { [spot.key]: value }, expiresAt });
  reply.setCookie(spot.cookie, session.id, { path: spot.finishPath, httpOnly: true, sameSite: 'lax', secure: deps.settings.SESSION_COOKIE_SECURE, maxAge: PARKED_SECONDS });
  return reply.code(303).header('cache-control', 'no-store').redirect(spot.finishPath);
}

/**
 * What was parked for this browser at `spot`, taken once: the cookie is cleared and the anonymous
 * session ended whatever it held. Undefined when nothing is parked (expired, already taken, or
 * another browser's finish URL).
 */
export async function takeParkedPost<T>(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, spot: ParkingSpot): Promise<T | undefined> {
  const { deps } = ctx;
  reply.clearCookie(spot.cookie, { path: spot.finishPath, httpOnly: true, sameSite: 'lax', secure: deps.settings.SESSION_COOKIE_SECURE });
  const parkedSession = await deps.sessions.load(request.cookies[spot.cookie]);
  if (!parkedSession) return undefined;
  await deps.sessions.end(parkedSession);
  // Only parkPost writes this key, with the value its caller reads back here.
  return parkedSession.data[spot.key] as T | undefined;
}
