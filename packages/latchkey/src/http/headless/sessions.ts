import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StoredSession } from '../../sessions/model.js';
import type { User } from '../../account/model.js';
import { clientOf } from '../kit/request-info.js';
import type { HeadlessContext } from './context.js';
import { integerListField } from './input.js';
import { sendErrors, sendOk, sendUnauthenticated } from './respond.js';

/**
 * The integer id the contract gives each session. Stored sessions have no integer key: they are
 * keyed by the SHA-256 of their secret id (sessions/session-service.ts). The first 48 bits of that
 * hash make a stable id that fits a JSON number exactly (a safe integer) and gives away nothing
 * usable: the hash is of a 256-bit random value, and even the whole hash cannot be turned back
 * into the id that authenticates. Two of one user's sessions sharing 48 bits is a 2^-48 event; it
 * would only mean that ending one ends both.
 */
export function publicSessionId(idHash: string): number {
  return Number.parseInt(idHash.slice(0, 12), 16);
}

const seconds = (at: Date): number => at.getTime() / 1000;

function sessionData(session: StoredSession, currentIdHash: string | undefined) {
  return {
    id: publicSessionId(session.idHash),
    user_agent: session.userAgent,
    ip: session.ipAddress,
    created_at: seconds(session.createdAt),
    last_seen_at: seconds(session.lastSeenAt),
    // Compared by hash: the response never holds another session's secret id.
    is_current: session.idHash === currentIdHash,
  };
}

/** auth/sessions (GET, DELETE): the signed-in user's live sessions, and ending some of them. */
export function registerSessionRoutes(api: FastifyInstance, ctx: HeadlessContext): void {
  const { deps } = ctx;

  async function sendSessionList(request: FastifyRequest, reply: FastifyReply, user: User): Promise<FastifyReply> {
    const current = await ctx.sessions.session(request);
    const sessions = await deps.sessions.listForUser(user.id);
    return sendOk(ctx, request, reply, { data: sessions.map((session) => sessionData(session, current?.idHash)) });
  }

  api.get('/auth/sessions', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    return sendSessionList(request, reply, user);
  });

  api.delete('/auth/sessions', async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    const ids = integerListField(request.body, 'sessions');
    if (ids === undefined) return sendErrors(ctx, request, reply, 400, [{ message: 'Give the ids of the sessions to end, as a list of integers.', code: 'invalid', param: 'sessions' }]);
    const wanted = new Set(ids);
    const current = await ctx.sessions.session(request);
    // Only the user's own sessions are candidates: an id of anyone else's, or of none, matches nothing.
    const ending = (await deps.sessions.listForUser(user.id)).filter((session) => wanted.has(publicSessionId(session.idHash)));
    const endsCurrent = ending.some((session) => session.idHash === current?.idHash);
    for (const session of ending) if (session.idHash !== current?.idHash) await deps.sessions.end(session);
    request.log.info({ userId: user.id, ended: ending.length, current: endsCurrent, ip: clientOf(request).ip }, 'sessions ended');
    if (endsCurrent) {
      // Ending this session is signing out: the cookie is cleared (or the token dies) as on logout.
      await ctx.sessions.logout(request, reply);
      await deps.events.emit('user_logged_out', user.id, clientOf(request));
      return sendUnauthenticated(ctx, request, reply);
    }
    return sendSessionList(request, reply, user);
  });
}
