import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import {
  addSocialApp,
  changeSocialApp,
  countSocialAccountsOfApp,
  findSocialApp,
  listSocialApps,
  removeSocialApp,
  type SocialAppFields,
  type SocialAppSummary,
} from '../../socialaccount/flows/manage-apps.js';
import type { HttpContext } from '../kit/context.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState } from '../kit/html-page.js';
import { clientOf } from '../kit/request-info.js';
import { forbidden, requireStaff, type StaffMember } from './guard.js';
import { idParam } from './list-query.js';
import { modelPages } from './paths.js';
import { reauthenticateFirst } from './recent-authentication.js';

/** The form's fields, the secret and its "clear" box apart: those are never shown again. */
const SHOWN_FIELDS = ['provider', 'provider_id', 'name', 'client_id', 'key', 'settings'] as const;

/** The form's values for a stored app (its settings as indented JSON); never its secret. */
function valuesOf(app: SocialAppSummary): Record<string, string> {
  return { provider: app.provider, provider_id: app.providerId, name: app.name, client_id: app.clientId, key: app.key, settings: JSON.stringify(app.settings, null, 2) };
}

/** The form's settings text as a value: empty is `{}`; text that is not JSON is refused here, what JSON is not an object by the flow. */
function settingsOf(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // The example is JSON, not words: a placeholder, so that its braces are not read as one.
    throw new LatchkeyError('invalid_input', 'Enter valid JSON: an object such as {example}.', { param: 'settings', params: { example: '{"server_url": "https://id.example.com"}' } });
  }
}

/**
 * `<admin>/socialaccount/socialapp/`: the provider applications in the database (allauth's
 * SocialAppAdmin), with those of SOCIALACCOUNT_PROVIDERS shown read-only beside them; add, change
 * and delete. The rules (what an app must be, collisions, sealing the secret, the audit trail) are
 * the flow's (socialaccount/flows/manage-apps.ts), shared with `manage socialapp`. Unlike Django's
 * admin the secret is write-only: never rendered, only said to be set; left empty it is kept,
 * typed it replaces the stored one, and setting, replacing or clearing it needs a recent sign-in.
 */
export function registerSocialAppAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'socialaccount.socialapp');
  const listPath = pages.list;
  // The kinds an operator may store, a project's own included, by the names they declare.
  const providers = ctx.deps.providerDirectory.registry.storableKinds().map((kind) => ({ value: kind.id, label: kind.name }));

  /** The app the URL names, or undefined (a 404) for an id that is not an app's. */
  async function appOf(request: FastifyRequest): Promise<SocialAppSummary | undefined> {
    const id = idParam((request.params as { id: string }).id);
    return id === undefined ? undefined : findSocialApp(ctx.deps, id);
  }

  function readForm(body: unknown): { fields: Record<(typeof SHOWN_FIELDS)[number] | 'secret' | 'clear_secret', string>; shown: Record<string, string> } {
    const fields = formFields(body, [...SHOWN_FIELDS, 'secret', 'clear_secret']);
    const shown = Object.fromEntries(SHOWN_FIELDS.map((name) => [name, fields[name]]));
    return { fields, shown };
  }

  function appFields(fields: Record<(typeof SHOWN_FIELDS)[number], string>): SocialAppFields {
    return { provider: fields.provider, providerId: fields.provider_id.trim(), name: fields.name.trim(), clientId: fields.client_id.trim(), key: fields.key.trim(), settings: settingsOf(fields.settings) };
  }

  async function form(
    request: FastifyRequest,
    reply: FastifyReply,
    staff: StaffMember,
    page: { app?: SocialAppSummary; state: FormState; status?: number },
  ): Promise<FastifyReply> {
    const { app, state } = page;
    const mayChange = staff.grants.may('socialaccount.socialapp', app ? 'change' : 'add');
    const context = {
      title: app ? (mayChange ? msg('Change social application') : msg('View social application')) : msg('Add social application'),
      admin_root: root,
      list_path: listPath,
      action: app ? pages.change(app.id) : pages.add,
      app,
      form: state,
      providers,
      may_change: mayChange,
      may_delete: app !== undefined && staff.grants.may('socialaccount.socialapp', 'delete'),
      // Said before the secret is typed, so that the confirmation does not come as a surprise after it.
      must_reauthenticate: mayChange && !(await ctx.sessions.isRecentlyAuthenticated(request)),
      reauthenticate_url: urls.urlFor('account_reauthenticate', {}, { next: request.url }),
    };
    return renderPage(ctx, request, reply, 'admin/socialapp_form.html', context, page.status ?? 200);
  }

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialapp', action: 'view' });
    if ('response' in staff) return staff.response;
    const { stored, fromSettings } = await listSocialApps(ctx.deps);
    const context = {
      title: msg('Select social application to change'),
      admin_root: root,
      list_path: listPath,
      apps: stored,
      settings_apps: fromSettings,
      may_add: staff.grants.may('socialaccount.socialapp', 'add'),
      may_change: staff.grants.may('socialaccount.socialapp', 'change'),
    };
    return renderPage(ctx, request, reply, 'admin/socialapp_list.html', context);
  });

  scope.get(pages.routes.add, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialapp', action: 'add' });
    if ('response' in staff) return staff.response;
    return form(request, reply, staff, { state: emptyForm({ provider: providers[0]?.value ?? '', settings: '{}' }) });
  });

  scope.post(pages.routes.add, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialapp', action: 'add' });
    if ('response' in staff) return staff.response;
    const { fields, shown } = readForm(request.body);
    try {
      const app = await addSocialApp(ctx.deps, staff, { ...appFields(fields), secret: fields.secret }, clientOf(request));
      await flash(ctx, request, reply, { level: 'success', text: msg('The social application “{name}” was added.', { name: app.name }) });
      return redirect(reply, listPath);
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply);
      if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, request, reply);
      return form(request, reply, staff, { state: formWithError(shown, error), status: refusalStatus(reply, error) });
    }
  });

  scope.get(pages.routes.change, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialapp', action: 'view' });
    if ('response' in staff) return staff.response;
    const app = await appOf(request);
    return app ? form(request, reply, staff, { app, state: emptyForm(valuesOf(app)) }) : reply.callNotFound();
  });

  scope.post(pages.routes.change, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialapp', action: 'change' });
    if ('response' in staff) return staff.response;
    const app = await appOf(request);
    if (!app) return reply.callNotFound();
    const { fields, shown } = readForm(request.body);
    const clear = fields.clear_secret === 'on';
    try {
      if (clear && fields.secret !== '') throw new LatchkeyError('invalid_input', 'Either type a new secret or tick “Clear the secret”, not both.', { param: 'secret' });
      const { app: changed, changed: names } = await changeSocialApp(ctx.deps, staff, app.id, { ...appFields(fields), secret: clear ? '' : fields.secret === '' ? undefined : fields.secret }, clientOf(request));
      const text = names.length === 0 ? msg('No fields changed.') : msg('The social application “{name}” was changed ({fields}).', { name: changed.name, fields: names.join(', ') });
      await flash(ctx, request, reply, { level: 'success', text });
      return redirect(reply, listPath);
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply);
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, request, reply);
      return form(request, reply, staff, { app, state: formWithError(shown, error), status: refusalStatus(reply, error) });
    }
  });

  scope.get(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialapp', action: 'delete' });
    if ('response' in staff) return staff.response;
    const app = await appOf(request);
    if (!app) return reply.callNotFound();
    const context = { title: msg('Are you sure?'), admin_root: root, list_path: listPath, app, accounts: await countSocialAccountsOfApp(ctx.deps, app), account_provider: app.providerId || app.provider };
    return renderPage(ctx, request, reply, 'admin/socialapp_delete.html', context);
  });

  scope.post(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'socialaccount.socialapp', action: 'delete' });
    if ('response' in staff) return staff.response;
    const app = await appOf(request);
    if (!app) return reply.callNotFound();
    try {
      await removeSocialApp(ctx.deps, staff, app.id, clientOf(request));
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply);
      // Deleted by someone else meanwhile.
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      throw error;
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('The social application “{name}” was deleted.', { name: app.name }) });
    return redirect(reply, listPath);
  });
}
