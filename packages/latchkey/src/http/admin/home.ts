import type { FastifyInstance } from 'fastify';
import type { AdminModel } from '../../admin/model.js';
import { msg, type Message } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { renderPage } from '../kit/html-page.js';
import { requireStaff } from './guard.js';
import type { AdminOptions } from './options.js';
import { modelParams } from './paths.js';

/**
 * The models the admin has pages for, as Django's index groups them: by app, with their labels
 * (Django's verbose names: messages, translated by the index page).
 */
const MODEL_PAGES: readonly { model: AdminModel; app: Message; label: Message }[] = [
  { model: 'users.user', app: msg('Users'), label: msg('Users') },
  { model: 'account.emailaddress', app: msg('Accounts'), label: msg('Email addresses') },
  { model: 'socialaccount.socialapp', app: msg('Social accounts'), label: msg('Social applications') },
  { model: 'socialaccount.socialaccount', app: msg('Social accounts'), label: msg('Social accounts') },
  { model: 'socialaccount.socialtoken', app: msg('Social accounts'), label: msg('Social application tokens') },
  { model: 'authtoken.tokenproxy', app: msg('Auth Token'), label: msg('Tokens') },
  { model: 'mfa.authenticator', app: msg('MFA'), label: msg('Authenticators') },
  { model: 'sessions.session', app: msg('Sessions'), label: msg('Sessions') },
  { model: 'audit.auditrecord', app: msg('Audit'), label: msg('Audit trail') },
];

/** `<admin>/`: the models this staff member may at least view, each linking to its list. */
export function registerAdminHome(scope: FastifyInstance, ctx: HttpContext, options: AdminOptions): void {
  const { urls } = ctx.deps;
  const served = MODEL_PAGES.filter((page) => options.apiTokens || page.model !== 'authtoken.tokenproxy');
  scope.get(urls.route('admin:index'), async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply);
    if ('response' in staff) return staff.response;
    const models = served.filter((page) => staff.grants.may(page.model, 'view')).map((page) => ({ ...page, url: urls.urlFor('admin:model_changelist', modelParams(page.model)) }));
    return renderPage(ctx, request, reply, 'admin/index.html', { title: msg('Site administration'), admin_root: urls.urlFor('admin:index'), models });
  });
}
