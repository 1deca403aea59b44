import type { FastifyInstance } from 'fastify';
import type { UserSearch } from '../../account/ports.js';
import type { HttpContext } from '../kit/context.js';
import { renderPage } from '../kit/html-page.js';
import { requireStaff } from './guard.js';
import { flag, idParam, PER_PAGE, queryText, withQuery, yesNoFilter } from './list-query.js';
import { adminRoot } from './paths.js';

/**
 * `<admin>/users/user/`: the users, 100 a page, newest first unless asked otherwise, searched by
 * the start of a username or an address, filtered by staff, superuser and active. Paging goes by
 * id (a keyset), so a page deep in a million users costs what the first one does, and no count of
 * the whole table is ever made.
 */
export function registerUserAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const root = adminRoot(ctx.deps.settings);
  const listPath = `${root}users/user/`;

  scope.get(listPath, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'view' });
    if ('response' in staff) return staff.response;
    const text = queryText(request.query);
    const [isStaff, isSuperuser, isActive] = [flag(text('is_staff')), flag(text('is_superuser')), flag(text('is_active'))];
    const shown = (value: boolean | undefined) => (value === undefined ? '' : value ? '1' : '0');
    const query: Record<string, string> = { q: text('q').slice(0, 254), is_staff: shown(isStaff), is_superuser: shown(isSuperuser), is_active: shown(isActive), o: text('o') === 'id' ? 'id' : '' };
    const after = idParam(text('after'));
    const search: UserSearch = {
      text: query.q!,
      order: query.o === 'id' ? 'id' : '-id',
      limit: PER_PAGE + 1,
      ...(isStaff === undefined ? {} : { isStaff }),
      ...(isSuperuser === undefined ? {} : { isSuperuser }),
      ...(isActive === undefined ? {} : { isActive }),
      ...(after === undefined ? {} : { afterId: after }),
    };
    const found = await ctx.deps.store.users.search(search);
    const users = found.slice(0, PER_PAGE);
    const context = {
      title: 'Select user to change',
      admin_root: root,
      list_path: listPath,
      query,
      login_by_email: ctx.deps.settings.USERNAME_TYPE === 'email',
      users,
      may_add: staff.grants.may('users.user', 'add'),
      filters: [yesNoFilter(listPath, query, 'is_staff', 'Staff status'), yesNoFilter(listPath, query, 'is_superuser', 'Superuser status'), yesNoFilter(listPath, query, 'is_active', 'Active')],
      order_url: `${listPath}${withQuery(query, { o: query.o === 'id' ? undefined : 'id' })}`,
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(users.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/user_list.html', context);
  });
}
