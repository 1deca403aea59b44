import type { FastifyInstance } from 'fastify';
import type { UserSearch } from '../../account/ports.js';
import type { HttpContext } from '../kit/context.js';
import { renderPage } from '../kit/html-page.js';
import { requireStaff } from './guard.js';
import { adminRoot } from './paths.js';

/** Django admin's page size. */
const PER_PAGE = 100;

/** A yes/no filter from the query string: '1' or '0'; anything else is no filter. */
function flag(value: unknown): boolean | undefined {
  return value === '1' ? true : value === '0' ? false : undefined;
}

/** The list's query string with some parameters changed (undefined drops one), for its links. */
function withQuery(query: Record<string, string>, changes: Record<string, string | undefined>): string {
  const merged = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, ...changes })) if (value !== undefined && value !== '') merged.set(name, value);
  const text = merged.toString();
  return text === '' ? '' : `?${text}`;
}

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
    const raw = request.query as Record<string, unknown>;
    const text = (name: string) => (typeof raw[name] === 'string' ? raw[name] : '');
    const query: Record<string, string> = { q: text('q').slice(0, 254), is_staff: text('is_staff'), is_superuser: text('is_superuser'), is_active: text('is_active'), o: text('o') === 'id' ? 'id' : '' };
    const after = /^\d{1,15}$/.test(text('after')) ? Number(text('after')) : undefined;
    const search: UserSearch = {
      text: query.q,
      order: query.o === 'id' ? 'id' : '-id',
      limit: PER_PAGE + 1,
      ...(flag(query.is_staff) === undefined ? {} : { isStaff: flag(query.is_staff)! }),
      ...(flag(query.is_superuser) === undefined ? {} : { isSuperuser: flag(query.is_superuser)! }),
      ...(flag(query.is_active) === undefined ? {} : { isActive: flag(query.is_active)! }),
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
      filters: ['is_staff', 'is_superuser', 'is_active'].map((name) => ({
        name,
        label: { is_staff: 'Staff status', is_superuser: 'Superuser status', is_active: 'Active' }[name],
        choices: [
          { label: 'All', url: `${listPath}${withQuery(query, { [name]: undefined })}`, selected: query[name] === '' },
          { label: 'Yes', url: `${listPath}${withQuery(query, { [name]: '1' })}`, selected: query[name] === '1' },
          { label: 'No', url: `${listPath}${withQuery(query, { [name]: '0' })}`, selected: query[name] === '0' },
        ],
      })),
      order_url: `${listPath}${withQuery(query, { o: query.o === 'id' ? undefined : 'id' })}`,
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(users.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/user_list.html', context);
  });
}
