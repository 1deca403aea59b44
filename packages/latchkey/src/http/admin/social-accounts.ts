import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { leavesNoWayIn, removeSocialAccountByAdmin, socialProviderName } from '../../admin/flows/manage-social-accounts.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { SocialAccount } from '../../socialaccount/model.js';
import type { HttpContext } from '../kit/context.js';
import { flash, redirect, renderPage } from '../kit/html-page.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { forbidden, requireStaff } from './guard.js';
import { ALL_CHOICE, idParam, instant, PER_PAGE, queryText, withQuery } from './list-query.js';
import { modelPages } from './paths.js';
import { reauthenticateFirst } from './recent-authentication.js';

/** The providers of the offered apps, for the filter's links: id and name, each once. */
export async function providerChoices(ctx: HttpContext): Promise<{ id: string; name: string }[]> {
  const offered = await ctx.deps.providerDirectory.offered();
  const seen = new Map<string, string>();
  for (const { provider, app } of offered) if (!seen.has(app.id)) seen.set(app.id, provider.name);
  return [...seen].map(([id, name]) => ({ id, name }));
}

/**
 * `<admin>/socialaccount/socialaccount/`: the users' accounts at providers (allauth's
 * SocialAccountAdmin): user, provider, uid, joined, last login, newest first (100 a page, keyset
 * paging, no count), filtered by provider, searched by the start of the uid or of the user's
 * login. An account's page shows what the provider said (its extra data, as escaped JSON), read
 * only. Removing one asks first, needs a recent sign-in, and may remove the user's last way in
 * (the page says so): admin/flows/manage-social-accounts.ts, which tells the user by email.
 */
export function registerSocialAccountAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'socialaccount.socialaccount');
  const listPath = pages.list;

  /** The account the URL names and its user, or undefined (a 404). */
  async function accountOf(request: FastifyRequest): Promise<{ account: SocialAccount; user: User } | undefined> {
    const id = idParam((request.params as { id: string }).id);
    const account = id === undefined ? undefined : await ctx.deps.store.socialAccounts.findById(id);
    const user = account && (await ctx.deps.store.users.findById(account.userId));
    return account && user ? { account, user } : undefined;
  }

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialaccount', action: 'view' });
    if ('response' in staff) return staff.response;
    const text = queryText(request.query);
    const providers = await providerChoices(ctx);
    // A provider no offered app serves (a hidden app's, or one removed since) still filters.
    const provider = text('provider').slice(0, 200);
    const query: Record<string, string> = { q: text('q').slice(0, 254), provider };
    const after = idParam(text('after'));
    const found = await ctx.deps.store.socialAccounts.search({
      text: query.q,
      ...(provider === '' ? {} : { provider }),
      ...(after === undefined ? {} : { afterId: after }),
      limit: PER_PAGE + 1,
    });
    const accounts = found.slice(0, PER_PAGE);
    const mayViewUsers = staff.grants.may('users.user', 'view');
    const names = new Map(providers.map((choice) => [choice.id, choice.name]));
    const context = {
      title: msg('Social accounts'),
      admin_root: root,
      list_path: listPath,
      query,
      login_by_email: ctx.deps.settings.USERNAME_TYPE === 'email',
      may_delete: staff.grants.may('socialaccount.socialaccount', 'delete'),
      accounts: accounts.map((account) => ({
        id: account.id,
        user: account.user,
        user_url: mayViewUsers ? modelPages(urls, 'users.user').change(account.userId) : undefined,
        provider: names.get(account.provider) ?? account.provider,
        uid: account.uid,
        date_joined: instant(account.dateJoined),
        last_login: instant(account.lastLogin),
      })),
      provider_filter: [
        { label: ALL_CHOICE, url: `${listPath}${withQuery(query, { provider: undefined })}`, selected: provider === '' },
        ...providers.map((choice) => ({ label: choice.name, url: `${listPath}${withQuery(query, { provider: choice.id })}`, selected: provider === choice.id })),
      ],
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(accounts.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/socialaccount_list.html', context);
  });

  scope.get(pages.routes.change, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialaccount', action: 'view' });
    if ('response' in staff) return staff.response;
    const found = await accountOf(request);
    if (!found) return reply.callNotFound();
    const { account, user } = found;
    const context = {
      title: msg('Social account {uid}', { uid: account.uid }),
      admin_root: root,
      list_path: listPath,
      target: user,
      user_url: staff.grants.may('users.user', 'view') ? modelPages(urls, 'users.user').change(user.id) : undefined,
      tokens_url: staff.grants.may('socialaccount.socialtoken', 'view') ? `${modelPages(urls, 'socialaccount.socialtoken').list}?account=${account.id}` : undefined,
      account: {
        id: account.id,
        provider: await socialProviderName(ctx.deps, account.provider),
        provider_id: account.provider,
        uid: account.uid,
        date_joined: instant(account.dateJoined),
        last_login: instant(account.lastLogin),
        // Rendered as text by the template's autoescaping: a claim with markup stays text.
        extra_data: JSON.stringify(account.extraData, null, 2),
      },
      may_delete: staff.grants.may('socialaccount.socialaccount', 'delete'),
    };
    return renderPage(ctx, request, reply, 'admin/socialaccount_change.html', context);
  });

  scope.get(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialaccount', action: 'delete' });
    if ('response' in staff) return staff.response;
    const found = await accountOf(request);
    if (!found) return reply.callNotFound();
    const { account, user } = found;
    const context = {
      title: msg('Are you sure?'),
      admin_root: root,
      list_path: listPath,
      target: user,
      account: { id: account.id, uid: account.uid, provider: await socialProviderName(ctx.deps, account.provider) },
      last_way_in: await leavesNoWayIn(ctx.deps, account, user),
    };
    return renderPage(ctx, request, reply, 'admin/socialaccount_delete.html', context);
  });

  scope.post(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialaccount', action: 'delete' });
    if ('response' in staff) return staff.response;
    const found = await accountOf(request);
    if (!found) return reply.callNotFound();
    try {
      const removed = await removeSocialAccountByAdmin(ctx.deps, staff.user, found.account.id, clientOf(request), staff.lastAuthenticatedAt);
      logMailFailures(request, [removed.notification], 'social account removed by an administrator');
      await flash(ctx, request, reply, {
        level: 'success',
        text: msg('The {provider} account of “{user}” was removed; they were told by email.', { provider: removed.providerName, user: removed.user.username ?? removed.user.email }),
      });
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply, error.text);
      if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, request, reply);
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      throw error;
    }
    return redirect(reply, listPath);
  });
}
