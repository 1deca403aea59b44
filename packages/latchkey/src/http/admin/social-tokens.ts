import type { FastifyInstance } from 'fastify';
import { msg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { renderPage } from '../kit/html-page.js';
import { requireStaff } from './guard.js';
import { ALL_CHOICE, idParam, instant, PER_PAGE, queryText, withQuery } from './list-query.js';
import { modelPages } from './paths.js';
import { providerChoices } from './social-accounts.js';

/**
 * `<admin>/socialaccount/socialtoken/`: the providers' tokens kept with SOCIALACCOUNT_STORE_TOKENS
 * (allauth's SocialTokenAdmin), read only: whose account and which app each is for, when it
 * expires, and whether an access and a refresh token are set, newest first (100 a page, keyset
 * paging, no count), filtered by provider and by account (`?account=<id>`). Unlike allauth's admin,
 * which shows the first 40 characters of the token, no value is ever shown: the repository does not
 * even read them.
 */
export function registerSocialTokenAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'socialaccount.socialtoken');
  const listPath = pages.list;

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialtoken', action: 'view' });
    if ('response' in staff) return staff.response;
    const text = queryText(request.query);
    const providers = await providerChoices(ctx);
    const provider = text('provider').slice(0, 200);
    const account = text('account');
    const query: Record<string, string> = { provider, account };
    // An account filter that names no account is a 404, never an empty list that looks like "none kept".
    const accountId = idParam(account);
    const filteredBy = accountId === undefined ? undefined : await ctx.deps.store.socialAccounts.findById(accountId);
    if (account !== '' && !filteredBy) return reply.callNotFound();
    const after = idParam(text('after'));
    const found = await ctx.deps.store.socialTokens.search({
      ...(provider === '' ? {} : { provider }),
      ...(accountId === undefined ? {} : { accountId }),
      ...(after === undefined ? {} : { afterId: after }),
      limit: PER_PAGE + 1,
    });
    const tokens = found.slice(0, PER_PAGE);
    const mayViewUsers = staff.grants.may('users.user', 'view');
    const mayViewAccounts = staff.grants.may('socialaccount.socialaccount', 'view');
    const mayViewApps = staff.grants.may('socialaccount.socialapp', 'view');
    const names = new Map(providers.map((choice) => [choice.id, choice.name]));
    const context = {
      title: filteredBy ? msg('Social application tokens of {provider} account {uid}', { provider: filteredBy.provider, uid: filteredBy.uid }) : msg('Social application tokens'),
      admin_root: root,
      list_path: listPath,
      query,
      filtered_by: filteredBy,
      tokens: tokens.map((token) => ({
        id: token.id,
        user: token.user,
        user_url: mayViewUsers ? modelPages(urls, 'users.user').change(token.user.id) : undefined,
        provider: names.get(token.provider) ?? token.provider,
        account_url: mayViewAccounts ? modelPages(urls, 'socialaccount.socialaccount').change(token.accountId) : undefined,
        app: token.appName,
        app_url: token.appId !== null && mayViewApps ? modelPages(urls, 'socialaccount.socialapp').change(token.appId) : undefined,
        expires: instant(token.expiresAt),
        has_access_token: token.hasAccessToken,
        has_refresh_token: token.hasRefreshToken,
      })),
      provider_filter: [
        { label: ALL_CHOICE, url: `${listPath}${withQuery(query, { provider: undefined })}`, selected: provider === '' },
        ...providers.map((choice) => ({ label: choice.name, url: `${listPath}${withQuery(query, { provider: choice.id })}`, selected: provider === choice.id })),
      ],
      all_accounts_url: filteredBy ? `${listPath}${withQuery(query, { account: undefined })}` : undefined,
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(tokens.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/socialtoken_list.html', context);
  });
}
