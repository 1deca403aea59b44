import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endSessions } from '../../sessions/flows/end-sessions.js';
import type { StoredSession } from '../../sessions/model.js';
import { publicSessionId } from '../../sessions/public-id.js';
import type { User } from '../../account/model.js';
import { clientOf } from '../kit/request-info.js';
import { signOut } from '../kit/sign-out.js';
import type { HttpContext } from '../kit/context.js';
import { integerListField } from '../kit/input.js';
import { sendErrors, sendOk, sendUnauthenticated } from './respond.js';
import { answers, bodies, headlessOperation, REFUSALS } from './operation-schema.js';

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
export function registerSessionRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;

  async function sendSessionList(request: FastifyRequest, reply: FastifyReply, user: User): Promise<FastifyReply> {
    const current = await ctx.sessions.session(request);
    const sessions = await deps.sessions.listForUser(user.id);
    return sendOk(ctx, request, reply, { data: sessions.map((session) => sessionData(session, current?.idHash)) });
  }

  api.get('/auth/sessions', {
    schema: headlessOperation('get', {
      tag: 'Sessions',
      summary: 'List sessions',
      description: "The signed-in user's live sessions, the current one marked.",
      responses: { 200: answers.Sessions, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    return sendSessionList(request, reply, user);
  });

  api.delete('/auth/sessions', {
    schema: headlessOperation('delete', {
      tag: 'Sessions',
      summary: 'End sessions',
      description: 'Ends the listed sessions of the signed-in user (ids of anyone else\'s match nothing). Ending the current one signs out (401).',
      body: bodies.EndSessions,
      responses: { 200: answers.Sessions, 400: answers.Error, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    const ids = integerListField(request.body, 'sessions');
    if (ids === undefined) return sendErrors(ctx, request, reply, 400, [{ ...REFUSALS.sessionIds, param: 'sessions' }]);
    const current = await ctx.sessions.session(request);
    const { ended, endsCurrent } = await endSessions(deps, { user, ids, current });
    request.log.info({ userId: user.id, ended, current: endsCurrent, ip: clientOf(request).ip }, 'sessions ended');
    if (endsCurrent) {
      // Ending this session is signing out: the cookie is cleared (or the token dies) as on logout.
      await signOut(ctx, request, reply);
      return sendUnauthenticated(ctx, request, reply);
    }
    return sendSessionList(request, reply, user);
  });
}
