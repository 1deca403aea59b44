import type { FastifyInstance } from 'fastify';
import type { AdminModel } from '../../admin/model.js';
import type { HttpContext } from '../kit/context.js';
import { renderPage } from '../kit/html-page.js';
import { requireStaff } from './guard.js';
import type { AdminOptions } from './options.js';
import { adminRoot } from './paths.js';

/** The models the admin has pages for, as Django's index groups them: by app, with their labels. */
const MODEL_PAGES: readonly { model: AdminModel; app: string; label: string; path: string }[] = [
  { model: 'users.user', app: 'Users', label: 'Users', path: 'users/user/' },
  { model: 'account.emailaddress', app: 'Accounts', label: 'Email addresses', path: 'account/emailaddress/' },
  { model: 'socialaccount.socialapp', app: 'Social accounts', label: 'Social applications', path: 'socialaccount/socialapp/' },
  { model: 'socialaccount.socialaccount', app: 'Social accounts', label: 'Social accounts', path: 'socialaccount/socialaccount/' },
  { model: 'socialaccount.socialtoken', app: 'Social accounts', label: 'Social application tokens', path: 'socialaccount/socialtoken/' },
  { model: 'authtoken.tokenproxy', app: 'Auth Token', label: 'Tokens', path: 'authtoken/tokenproxy/' },
  { model: 'mfa.authenticator', app: 'MFA', label: 'Authenticators', path: 'mfa/authenticator/' },
  { model: 'sessions.session', app: 'Sessions', label: 'Sessions', path: 'sessions/session/' },
  { model: 'audit.auditrecord', app: 'Audit', label: 'Audit trail', path: 'audit/auditrecord/' },
];

/** `<admin>/`: the models this staff member may at least view, each linking to its list. */
export function registerAdminHome(scope: FastifyInstance, ctx: HttpContext, options: AdminOptions): void {
  const root = adminRoot(ctx.deps.settings);
  const served = MODEL_PAGES.filter((page) => options.apiTokens || page.model !== 'authtoken.tokenproxy');
  scope.get(root, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply);
    if ('response' in staff) return staff.response;
    const models = served.filter((page) => staff.grants.may(page.model, 'view')).map((page) => ({ ...page, url: `${root}${page.path}` }));
    return renderPage(ctx, request, reply, 'admin/index.html', { title: 'Site administration', admin_root: root, models });
  });
}
