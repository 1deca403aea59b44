import type { FastifyInstance } from 'fastify';
import { ACCOUNT_EVENTS } from '../../account/events.js';
import type { AuditSearch, UserLabel } from '../../account/ports.js';
import { msg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { renderPage } from '../kit/html-page.js';
import { requireStaff } from './guard.js';
import { ALL_CHOICE, idParam, instant, PER_PAGE, queryText, withQuery, type FilterChoice } from './list-query.js';
import { modelPages } from './paths.js';

/**
 * `<admin>/audit/auditrecord/`: the audit trail (every account and admin event: account/events.ts),
 * read-only, 100 records a page, newest first, filtered by event and by user (a user's id, or a
 * click on a user in the list), paged by id (a keyset, no count). Each record shows its time, its
 * event, its user, the user an admin change was made to, where it came from and its data as JSON.
 * Filtered by a user, the trail shows what they did and what staff did to them: an admin change is
 * recorded against the staff member, so a filter on that alone would hide it.
 */
export function registerAuditTrailAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { settings } = ctx.deps;
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'audit.auditrecord');
  const listPath = pages.list;
  const loginByEmail = settings.USERNAME_TYPE === 'email';

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'audit.auditrecord', action: 'view' });
    if ('response' in staff) return staff.response;
    const text = queryText(request.query);
    const event = text('event');
    const userId = idParam(text('user'));
    const after = idParam(text('after'));
    const query: Record<string, string> = {
      event: (ACCOUNT_EVENTS as readonly string[]).includes(event) ? event : '',
      user: userId === undefined ? '' : String(userId),
    };
    const search: AuditSearch = {
      limit: PER_PAGE + 1,
      ...(query.event === '' ? {} : { event: query.event }),
      ...(userId === undefined ? {} : { userId }),
      ...(after === undefined ? {} : { afterId: after }),
    };
    const found = await ctx.deps.store.auditLog.search(search);
    const labelOf = (user: UserLabel | null) => (user === null ? undefined : ((loginByEmail ? user.email : user.username) ?? user.email));
    const filterUrl = (id: number | null) => (id === null ? undefined : `${listPath}${withQuery(query, { user: String(id) })}`);
    const records = found.slice(0, PER_PAGE).map((record) => ({
      id: record.id,
      at: instant(record.createdAt),
      event: record.event,
      userId: record.userId,
      user: labelOf(record.user),
      userUrl: filterUrl(record.userId),
      targetUserId: record.targetUserId,
      targetUser: labelOf(record.targetUser),
      targetUserUrl: filterUrl(record.targetUserId),
      ipAddress: record.ipAddress,
      userAgent: record.userAgent,
      data: JSON.stringify(record.data),
    }));
    const filteredUser = userId === undefined ? undefined : await ctx.deps.store.users.findById(userId);
    return renderPage(ctx, request, reply, 'admin/auditrecord_list.html', {
      title: msg('Audit trail'),
      admin_root: root,
      list_path: listPath,
      query,
      records,
      user_filter:
        userId === undefined
          ? undefined
          : { id: userId, label: labelOf(filteredUser ?? null), all_url: `${listPath}${withQuery(query, { user: undefined })}` },
      // The events by their names, as the records show them: names, not messages.
      event_filter: [
        { label: ALL_CHOICE, url: `${listPath}${withQuery(query, { event: undefined })}`, selected: query.event === '' },
        ...ACCOUNT_EVENTS.map((name) => ({ label: name, url: `${listPath}${withQuery(query, { event: name })}`, selected: query.event === name })),
      ] satisfies FilterChoice[],
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(records.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    });
  });
}
