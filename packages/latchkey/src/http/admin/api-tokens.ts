import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { createApiTokenByAdmin, deleteApiTokenByAdmin } from '../../admin/flows/manage-api-tokens.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { ApiToken } from '../../tokens/model.js';
import type { HttpContext } from '../kit/context.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState } from '../kit/html-page.js';
import { clientOf } from '../kit/request-info.js';
import { forbidden, requireStaff } from './guard.js';
import { idParam, instant, PER_PAGE, queryText, withQuery } from './list-query.js';
import { modelPages } from './paths.js';
import { reauthenticateFirst, redirectUnlessRecentlyAuthenticated } from './recent-authentication.js';

/**
 * `<admin>/authtoken/tokenproxy/`: the API tokens (Django REST framework's TokenProxy admin, titled
 * "Tokens" as DRF's is). As with DRF's proxy, a token's URL carries its user's id. The list shows
 * whose each token is and since when, never its key: keys are stored only as a hash and a sealed
 * copy. Adding one (for a user typed by username or email, after a recent sign-in) shows its key
 * once, on a page that is never cached; deleting one asks first. The rules are the flows'
 * (admin/flows/manage-api-tokens.ts).
 */
export function registerApiTokenAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'authtoken.tokenproxy');
  const listPath = pages.list;
  const loginByEmail = ctx.deps.settings.USERNAME_TYPE === 'email';

  /** The user the URL names and their token, or undefined (a 404) when either is missing. */
  async function tokenOf(request: FastifyRequest): Promise<{ user: User; token: ApiToken } | undefined> {
    const id = idParam((request.params as { id: string }).id);
    const user = id === undefined ? undefined : await ctx.deps.store.users.findById(id);
    const token = user && (await ctx.deps.store.apiTokens.findForUser(user.id));
    return user && token ? { user, token } : undefined;
  }

  function addForm(request: FastifyRequest, reply: FastifyReply, form: FormState, status = 200): Promise<FastifyReply> {
    return renderPage(ctx, request, reply, 'admin/tokenproxy_add.html', { title: msg('Add token'), admin_root: root, list_path: listPath, form, login_by_email: loginByEmail }, status);
  }

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'authtoken.tokenproxy', action: 'view' });
    if ('response' in staff) return staff.response;
    const text = queryText(request.query);
    const query: Record<string, string> = { q: text('q').slice(0, 254) };
    const after = idParam(text('after'));
    const found = await ctx.deps.store.apiTokens.search({ text: query.q, ...(after === undefined ? {} : { afterUserId: after }), limit: PER_PAGE + 1 });
    const tokens = found.slice(0, PER_PAGE);
    const context = {
      title: msg('Tokens'),
      admin_root: root,
      list_path: listPath,
      query,
      login_by_email: loginByEmail,
      may_add: staff.grants.may('authtoken.tokenproxy', 'add'),
      tokens: tokens.map((token) => ({ user: token.user, created: instant(token.createdAt) })),
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(tokens.at(-1)!.userId) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/tokenproxy_list.html', context);
  });

  scope.get(pages.routes.add, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'authtoken.tokenproxy', action: 'add' });
    if ('response' in staff) return staff.response;
    // Asked before the form rather than after it, so that nothing typed is lost on the way.
    const stale = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (stale) return stale.response;
    // `?user=<id>` (from a user's page) fills in whom it is for.
    const id = idParam(queryText(request.query)('user'));
    const user = id === undefined ? undefined : await ctx.deps.store.users.findById(id);
    return addForm(request, reply, emptyForm(user ? { user: (loginByEmail ? user.email : user.username) ?? user.email } : {}));
  });

  scope.post(pages.routes.add, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'authtoken.tokenproxy', action: 'add' });
    if ('response' in staff) return staff.response;
    const fields = formFields(request.body, ['user']);
    try {
      const { user, key } = await createApiTokenByAdmin(ctx.deps, staff.user, fields.user, clientOf(request), staff.lastAuthenticatedAt);
      // Answered here, not after a redirect: the key is in this one response (never cached) and
      // nowhere else; reloading the page would only be refused, the user having a token now.
      const context = { title: msg('Token added'), admin_root: root, list_path: listPath, target: user, key };
      return renderPage(ctx, request, reply, 'admin/tokenproxy_created.html', context);
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply, error.text);
      if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, request, reply);
      return addForm(request, reply, formWithError({ user: fields.user }, error), refusalStatus(reply, error));
    }
  });

  scope.get(pages.routes.change, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'authtoken.tokenproxy', action: 'view' });
    if ('response' in staff) return staff.response;
    const found = await tokenOf(request);
    if (!found) return reply.callNotFound();
    const context = {
      title: msg('Token'),
      admin_root: root,
      list_path: listPath,
      target: found.user,
      created: instant(found.token.createdAt),
      user_url: staff.grants.may('users.user', 'view') ? modelPages(urls, 'users.user').change(found.user.id) : undefined,
      may_delete: staff.grants.may('authtoken.tokenproxy', 'delete'),
    };
    return renderPage(ctx, request, reply, 'admin/tokenproxy_change.html', context);
  });

  scope.get(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'authtoken.tokenproxy', action: 'delete' });
    if ('response' in staff) return staff.response;
    const found = await tokenOf(request);
    if (!found) return reply.callNotFound();
    return renderPage(ctx, request, reply, 'admin/tokenproxy_delete.html', { title: msg('Are you sure?'), admin_root: root, list_path: listPath, target: found.user });
  });

  scope.post(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'authtoken.tokenproxy', action: 'delete' });
    if ('response' in staff) return staff.response;
    const found = await tokenOf(request);
    if (!found) return reply.callNotFound();
    try {
      await deleteApiTokenByAdmin(ctx.deps, staff.user, found.user, clientOf(request));
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply, error.text);
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      throw error;
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('The token of “{user}” was deleted.', { user: found.user.username ?? found.user.email }) });
    return redirect(reply, listPath);
  });
}
