import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endSessionByAdmin, endUserSessionsByAdmin } from '../../admin/flows/manage-sessions.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, nmsg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { flash, formFields, redirect, renderPage } from '../kit/html-page.js';
import { clientOf } from '../kit/request-info.js';
import { forbidden, requireStaff } from './guard.js';
import { idParam, instant, PER_PAGE, queryText, withQuery } from './list-query.js';
import { modelPages } from './paths.js';

/** A stored session's key: the SHA-256 of its id, in hex (sessions/session-service.ts). */
const ID_HASH = /^[0-9a-f]{64}$/;

/**
 * `<admin>/sessions/session/`: the live signed-in sessions, most recently seen first (100 a page,
 * keyset paging, no count), all of them or one user's (`?user=<id>`, linked from the user's
 * page); end one, or all of a user's, with the 'delete' permission. A session is shown by a short
 * label (the start of the hash of its id, itself a hash: nothing to sign in with), never by its id.
 * The URLs that end one carry the hash, which cannot be turned back into the id either.
 */
export function registerSessionAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'sessions.session');
  const listPath = pages.list;

  /** Where to go back to after an ending: the list, still filtered by the user it was filtered by. */
  function backToList(request: FastifyRequest): string {
    const user = idParam(formFields(request.body, ['user']).user);
    return `${listPath}${withQuery({}, { user: user === undefined ? undefined : String(user) })}`;
  }

  /** A refusal's answer: 403 for a right the staff member lacks, 404 for a session gone meanwhile. */
  async function refused(request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<FastifyReply | void> {
    if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply, error.text);
    if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
    throw error;
  }

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'sessions.session', action: 'view' });
    if ('response' in staff) return staff.response;
    const text = queryText(request.query);
    const user = text('user');
    const query: Record<string, string> = { user };
    // A user filter that names nobody is a 404, as a user's page would be: never an empty list
    // that looks like "no sessions".
    const userId = idParam(user);
    const filteredBy = userId === undefined ? undefined : await ctx.deps.store.users.findById(userId);
    if (user !== '' && !filteredBy) return reply.callNotFound();
    const cursor = /^(\d{1,15})\.([0-9a-f]{64})$/.exec(text('after'));
    const after = cursor ? { lastSeenAt: new Date(Number(cursor[1])), idHash: cursor[2]! } : undefined;
    const found = await ctx.deps.sessions.search({ ...(userId === undefined ? {} : { userId }), ...(after ? { after } : {}), limit: PER_PAGE + 1 });
    const sessions = found.slice(0, PER_PAGE);
    const current = (await ctx.sessions.session(request))?.idHash;
    const mayViewUsers = staff.grants.may('users.user', 'view');
    const last = sessions.at(-1);
    const context = {
      title: filteredBy ? msg('Sessions of {user}', { user: filteredBy.username ?? filteredBy.email }) : msg('Sessions'),
      admin_root: root,
      list_path: listPath,
      query,
      filtered_by: filteredBy,
      may_delete: staff.grants.may('sessions.session', 'delete'),
      sessions: sessions.map((session) => ({
        label: session.idHash.slice(0, 8),
        id_hash: session.idHash,
        user: session.user,
        user_url: mayViewUsers ? modelPages(urls, 'users.user').change(session.userId) : undefined,
        user_sessions_url: `${listPath}?user=${session.userId}`,
        ip: session.ipAddress,
        user_agent: session.userAgent,
        created: instant(session.createdAt),
        last_seen: instant(session.lastSeenAt),
        expires: instant(session.expiresAt),
        current: session.idHash === current,
      })),
      all_url: filteredBy ? listPath : undefined,
      next_url: found.length > PER_PAGE && last ? `${listPath}${withQuery(query, { after: `${last.lastSeenAt.getTime()}.${last.idHash}` })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/session_list.html', context);
  });

  // A session's id in the URL is its hash (admin:model_delete's `id`): the page never holds a session id.
  scope.post(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'sessions.session', action: 'delete' });
    if ('response' in staff) return staff.response;
    const { id: hash } = request.params as { id: string };
    if (!ID_HASH.test(hash)) return reply.callNotFound();
    const current = (await ctx.sessions.session(request))?.idHash;
    try {
      const target = await endSessionByAdmin(ctx.deps, staff.user, hash, clientOf(request));
      // Ending the session this request came in is signing out: the admin's login comes next.
      if (hash === current) return redirect(reply, urls.urlFor('admin:login'));
      await flash(ctx, request, reply, { level: 'success', text: msg('A session of “{user}” was ended.', { user: target.username ?? target.email }) });
    } catch (error) {
      return refused(request, reply, error);
    }
    return redirect(reply, backToList(request));
  });

  scope.post(urls.route('admin:sessions_session_user_delete'), async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'sessions.session', action: 'delete' });
    if ('response' in staff) return staff.response;
    const id = idParam((request.params as { id: string }).id);
    const target = id === undefined ? undefined : await ctx.deps.store.users.findById(id);
    if (!target) return reply.callNotFound();
    try {
      const ended = await endUserSessionsByAdmin(ctx.deps, staff.user, target, clientOf(request));
      if (target.id === staff.user.id) return redirect(reply, urls.urlFor('admin:login'));
      await flash(ctx, request, reply, { level: 'success', text: nmsg('{count} session of “{user}” ended.', '{count} sessions of “{user}” ended.', ended, { user: target.username ?? target.email }) });
    } catch (error) {
      return refused(request, reply, error);
    }
    return redirect(reply, `${listPath}?user=${target.id}`);
  });
}
