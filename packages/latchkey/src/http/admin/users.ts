import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import type { UserOrder, UserSearch, UserSortField } from '../../account/ports.js';
import { deactivateUserByAdmin, deleteUserByAdmin } from '../../admin/flows/manage-users.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, nmsg, type Message } from '../../core/i18n/message.js';
import { userFieldValueOf, type UserField } from '../../core/user-fields.js';
import type { HttpContext } from '../kit/context.js';
import { flash, redirect, renderPage, type FlashMessage } from '../kit/html-page.js';
import { clientOf } from '../kit/request-info.js';
import { readerTranslator } from '../kit/request-language.js';
import { actionChoices, NOTHING_SELECTED, readBulkRequest, warnAndReturn } from './bulk-actions.js';
import { forbidden, requireStaff } from './guard.js';
import { flag, idParam, instant, PER_PAGE, queryText, sortHeaders, withQuery, yesNoFilter } from './list-query.js';
import { modelPages } from './paths.js';
import { redirectUnlessRecentlyAuthenticated } from './recent-authentication.js';
import { adminTextOf, declaredText, listedUserFields, readUserFieldFilters, searchedUserFields, userFieldFilter, filteredUserFields } from './user-fields.js';

/** The list's actions, by the value the action select sends, with the permission each needs and what it says when done. */
const ACTIONS = {
  deactivate: {
    label: msg('Deactivate selected users'),
    permission: 'change',
    done: (count: number, users: string) => nmsg('Deactivated {count} user: {users}.', 'Deactivated {count} users: {users}.', count, { users }),
  },
  delete_selected: {
    label: msg('Delete selected users'),
    permission: 'delete',
    done: (count: number, users: string) => nmsg('Deleted {count} user: {users}.', 'Deleted {count} users: {users}.', count, { users }),
  },
} as const;
type ActionName = keyof typeof ACTIONS;

/** Newest first, unless a column header asks otherwise. */
const DEFAULT_ORDER: UserOrder = '-id';

/** The sortable columns' headers, by the field `o` names (the username only where users have one). */
function sortLabels(loginByEmail: boolean): Partial<Record<UserSortField, Message>> {
  return { ...(loginByEmail ? {} : { username: msg('Username') }), email: msg('Email address'), name: msg('Name'), date_joined: msg('Date joined'), id: msg('ID') };
}

/** `o` when it names a sortable column of this project, with '-' before it for descending; otherwise nothing (the default order). */
function orderParam(text: string, loginByEmail: boolean): UserOrder | undefined {
  const descending = text.startsWith('-');
  const field = (Object.keys(sortLabels(loginByEmail)) as UserSortField[]).find((candidate) => candidate === (descending ? text.slice(1) : text));
  if (field === undefined) return undefined;
  return descending ? `-${field}` : field;
}

/**
 * The list's search, filters and order as its query string carries them (its links, and the
 * action form that posts back to it): the project's own fields' filters among them, after the
 * flags'.
 */
function listQuery(request: FastifyRequest, loginByEmail: boolean, userFields: readonly UserField[]): Record<string, string> {
  const text = queryText(request.query);
  const shown = (name: string) => (flag(text(name)) === undefined ? '' : text(name));
  const order = orderParam(text('o'), loginByEmail);
  return {
    q: text('q').slice(0, 254),
    is_staff: shown('is_staff'),
    is_superuser: shown('is_superuser'),
    is_active: shown('is_active'),
    ...readUserFieldFilters(userFields, text).query,
    o: order === undefined || order === DEFAULT_ORDER ? '' : order,
  };
}

/**
 * `<admin>/users/user/`: the users, 100 a page, newest first or sorted by a column header (username
 * or address, name, date joined, id; both ways), searched by the start of a username, an address,
 * a name or its second word, filtered by staff, superuser and active; the order, search and
 * filters survive paging, and a bad `o` is the default order. Paging is a keyset on the sort value
 * and the id, so a page deep in a million users costs what the first one does, and no count of
 * the whole table is ever made (bench/admin-users.ts measures it).
 *
 * The project's own fields (docs/user-fields.md) take part as their declaration says: a column
 * for each `admin.list` one (a boolean as Yes/No, a choice by its label, a date as its day), the
 * search in each `admin.search` one (by its start, as the others), and a filter for each
 * `admin.filter` one (Yes/No, or one link per choice), beside the flags' and in their style.
 *
 * Staff who may change or delete users get the bulk actions "Deactivate selected users" and
 * "Delete selected users" (bulk-actions.ts: a confirmation page listing the users first). Each user
 * goes through the flow the change and delete pages use, so its rules hold per user: a superuser
 * or the staff member themself is skipped, and said so, without stopping the others. A deletion
 * needs a recent sign-in, as the delete page does.
 */
export function registerUserAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'users.user');
  const listPath = pages.list;
  const loginByEmail = ctx.deps.settings.USERNAME_TYPE === 'email';
  const label = (user: User) => (loginByEmail ? user.email : (user.username ?? user.email));
  const { userFields } = ctx.deps;
  const listed = listedUserFields(userFields);
  const searchedLabels = searchedUserFields(userFields).map((field) => declaredText(field.label));

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'view' });
    if ('response' in staff) return staff.response;
    const query = listQuery(request, loginByEmail, userFields);
    const fieldFilters = readUserFieldFilters(userFields, (name) => query[name] ?? '').search;
    const [isStaff, isSuperuser, isActive] = [flag(query.is_staff!), flag(query.is_superuser!), flag(query.is_active!)];
    const after = idParam(queryText(request.query)('after'));
    const order = orderParam(query.o!, loginByEmail) ?? DEFAULT_ORDER;
    const search: UserSearch = {
      text: query.q!,
      order,
      limit: PER_PAGE + 1,
      ...(isStaff === undefined ? {} : { isStaff }),
      ...(isSuperuser === undefined ? {} : { isSuperuser }),
      ...(isActive === undefined ? {} : { isActive }),
      ...(Object.keys(fieldFilters).length === 0 ? {} : { userFields: fieldFilters }),
      ...(after === undefined ? {} : { afterId: after }),
    };
    const found = await ctx.deps.store.users.search(search);
    // A page continues after its predecessor's last user; if that user has been deleted since, the
    // page's place in a sort by anything but the id is gone, and the list starts again.
    if (found.length === 0 && after !== undefined && order !== 'id' && order !== '-id' && (await ctx.deps.store.users.findById(after)) === undefined) {
      await flash(ctx, request, reply, { level: 'info', text: msg('The user that page came after no longer exists: here is the first page.') });
      return redirect(reply, `${listPath}${withQuery(query, {})}`);
    }
    const users = found.slice(0, PER_PAGE).map((user) => ({ ...user, joined: instant(user.dateJoined), listed_fields: listed.map((field) => adminTextOf(field, userFieldValueOf(user, field))) }));
    const actions = actionChoices(ACTIONS, (action) => staff.grants.may('users.user', ACTIONS[action].permission));
    const context = {
      title: msg('Select user to change'),
      admin_root: root,
      list_path: listPath,
      // The action form posts back to this very page, so that the list it returns to keeps its filters.
      action_url: `${listPath}${withQuery(query, { after: after === undefined ? undefined : String(after) })}`,
      query,
      login_by_email: loginByEmail,
      users,
      may_add: staff.grants.may('users.user', 'add'),
      actions,
      may_act: actions.length > 0,
      filters: [
        yesNoFilter(listPath, query, 'is_staff', msg('Staff status')),
        yesNoFilter(listPath, query, 'is_superuser', msg('Superuser status')),
        yesNoFilter(listPath, query, 'is_active', msg('Active')),
        ...filteredUserFields(userFields).map((field) => userFieldFilter(listPath, query, field)),
      ],
      // A new search keeps the filters and the order (hidden inputs of the search form).
      kept: Object.entries(query).filter(([name, value]) => name !== 'q' && value !== '').map(([name, value]) => ({ name, value })),
      searched_labels: searchedLabels,
      field_columns: listed.map((field) => declaredText(field.label)),
      columns: sortHeaders(listPath, query, sortLabels(loginByEmail), order, DEFAULT_ORDER),
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(users.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/user_list.html', context);
  });

  scope.post(pages.routes.list, async (request: FastifyRequest, reply: FastifyReply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'view' });
    if ('response' in staff) return staff.response;
    // Staff who may take no action at all (view only) are refused whatever they sent.
    if (!Object.values(ACTIONS).some((action) => staff.grants.may('users.user', action.permission))) return forbidden(ctx, request, reply);
    const query = listQuery(request, loginByEmail, userFields);
    const after = idParam(queryText(request.query)('after'));
    const back = `${listPath}${withQuery(query, { after: after === undefined ? undefined : String(after) })}`;
    const bulk = await readBulkRequest(ctx, request, reply, ACTIONS, back);
    if ('response' in bulk) return bulk.response;
    const action: ActionName = bulk.action;
    if (!staff.grants.may('users.user', ACTIONS[action].permission)) return forbidden(ctx, request, reply);
    if (action === 'delete_selected') {
      const stale = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
      if (stale) return stale.response;
    }

    const found = await Promise.all(bulk.ids.map((id) => ctx.deps.store.users.findById(id)));
    const targets = found.filter((user): user is User => user !== undefined).sort((a, b) => b.id - a.id);
    if (targets.length === 0) return warnAndReturn(ctx, request, reply, NOTHING_SELECTED, back);

    if (!bulk.confirmed) {
      return renderPage(ctx, request, reply, 'admin/user_bulk_confirm.html', {
        title: msg('Are you sure?'),
        admin_root: root,
        list_path: listPath,
        action_url: back,
        back_url: back,
        action: { value: action, label: ACTIONS[action].label },
        deleting: action === 'delete_selected',
        login_by_email: loginByEmail,
        users: targets,
      });
    }

    const done: User[] = [];
    const unchanged: User[] = [];
    const refused: string[] = [];
    // A refusal's reason goes inside the flash message, which holds only text: it is put in the staff member's language here.
    const translator = readerTranslator(ctx.deps, request, staff.user);
    for (const target of targets) {
      if (action === 'deactivate' && !target.isActive) {
        unchanged.push(target);
        continue;
      }
      try {
        if (action === 'deactivate') await deactivateUserByAdmin(ctx.deps, staff.user, target, clientOf(request));
        else await deleteUserByAdmin(ctx.deps, staff.user, target, clientOf(request), staff.lastAuthenticatedAt);
        done.push(target);
      } catch (error) {
        if (!isLatchkeyError(error, 'permission_denied')) throw error;
        refused.push(translator.translate(msg('“{user}” ({reason})', { user: label(target), reason: translator.translate(error.text) })));
      }
    }
    const messages: FlashMessage[] = [];
    if (done.length > 0) messages.push({ level: 'success', text: ACTIONS[action].done(done.length, done.map(label).join(', ')) });
    if (unchanged.length > 0) messages.push({ level: 'info', text: msg('Already inactive: {users}.', { users: unchanged.map(label).join(', ') }) });
    if (refused.length > 0) messages.push({ level: 'warning', text: nmsg('Skipped {count} user: {users}.', 'Skipped {count} users: {users}.', refused.length, { users: refused.join('; ') }) });
    const gone = bulk.ids.length - targets.length;
    if (gone > 0) messages.push({ level: 'info', text: nmsg('{count} user selected no longer exists.', '{count} users selected no longer exist.', gone) });
    for (const message of messages) await flash(ctx, request, reply, message);
    return redirect(reply, back);
  });
}
