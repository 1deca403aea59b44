import type { FastifyInstance } from 'fastify';
import type { AdminModel } from '../../admin/model.js';
import type { HttpContext } from '../kit/context.js';
import { renderPage } from '../kit/html-page.js';
import { requireStaff } from './guard.js';
import type { AdminOptions } from './options.js';
import { modelParams } from './paths.js';

/** The models the admin has pages for, as Django's index groups them: by app, with their labels. */
const MODEL_PAGES: readonly { model: AdminModel; app: string; label: string }[] = [
  { model: 'users.user', app: 'Users', label: 'Users' },
  { model: 'account.emailaddress', app: 'Accounts', label: 'Email addresses' },
  { model: 'socialaccount.socialapp', app: 'Social accounts', label: 'Social applications' },
  { model: 'socialaccount.socialaccount', app: 'Social accounts', label: 'Social accounts' },
  { model: 'socialaccount.socialtoken', app: 'Social accounts', label: 'Social application tokens' },
  { model: 'authtoken.tokenproxy', app: 'Auth Token', label: 'Tokens' },
  { model: 'mfa.authenticator', app: 'MFA', label: 'Authenticators' },
  { model: 'sessions.session', app: 'Sessions', label: 'Sessions' },
  { model: 'audit.auditrecord', app: 'Audit', label: 'Audit trail' },
];

/** `<admin>/`: the models this staff member may at least view, each linking to its list. */
export function registerAdminHome(scope: FastifyInstance, ctx: HttpContext, options: AdminOptions): void {
  const { urls } = ctx.deps;
  const served = MODEL_PAGES.filter((page) => options.apiTokens || page.model !== 'authtoken.tokenproxy');
  scope.get(urls.route('admin:index'), async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply);
    if ('response' in staff) return staff.response;
    const models = served.filter((page) => staff.grants.may(page.model, 'view')).map((page) => ({ ...page, url: urls.urlFor('admin:model_changelist', modelParams(page.model)) }));
    return renderPage(ctx, request, reply, 'admin/index.html', { title: 'Site administration', admin_root: urls.urlFor('admin:index'), models });
  });
}
