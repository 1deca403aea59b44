import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { recoveryCodesGoWith, removeAuthenticatorByAdmin } from '../../admin/flows/manage-authenticators.js';
import { AUTHENTICATOR_TYPES, type AuthenticatorType } from '../../config/choices.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, type Message } from '../../core/i18n/message.js';
import type { Authenticator } from '../../mfa/model.js';
import type { HttpContext } from '../kit/context.js';
import { flash, redirect, renderPage } from '../kit/html-page.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { forbidden, requireStaff } from './guard.js';
import { ALL_CHOICE, idParam, instant, PER_PAGE, queryText, withQuery } from './list-query.js';
import { modelPages } from './paths.js';
import { reauthenticateFirst } from './recent-authentication.js';

/** What each type is called where people see it (the 2FA pages' names). */
const TYPE_LABELS: Record<AuthenticatorType, Message> = { totp: msg('Authenticator app'), recovery_codes: msg('Recovery codes'), webauthn: msg('Security key') };

/** The list's "Remove" link as assistive technology says it, a whole sentence for each type. */
function removeLabel(type: AuthenticatorType, user: string): Message {
  switch (type) {
    case 'totp':
      return msg('Remove the authenticator app of {user}', { user });
    case 'recovery_codes':
      return msg('Remove the recovery codes of {user}', { user });
    case 'webauthn':
      return msg('Remove the security key of {user}', { user });
  }
}

/** What a removal says when done: what went (the recovery codes with the last authenticator), and of whom. */
function removedMessage(type: AuthenticatorType, codesRemoved: boolean, user: string): Message {
  switch (type) {
    case 'totp':
      return codesRemoved
        ? msg('Authenticator app and recovery codes of “{user}” removed; they were told by email.', { user })
        : msg('Authenticator app of “{user}” removed; they were told by email.', { user });
    case 'webauthn':
      return codesRemoved
        ? msg('Security key and recovery codes of “{user}” removed; they were told by email.', { user })
        : msg('Security key of “{user}” removed; they were told by email.', { user });
    case 'recovery_codes':
      return msg('Recovery codes of “{user}” removed; they were told by email.', { user });
  }
}

function isAuthenticatorType(value: string): value is AuthenticatorType {
  return (AUTHENTICATOR_TYPES as readonly string[]).includes(value);
}

/**
 * `<admin>/mfa/authenticator/`: the users' second factors (allauth.mfa's Authenticator admin):
 * user, type, created, last used, newest first (100 a page, keyset paging, no count), filtered by
 * type and by user (`?user=<id>`), searched by the start of the user's login. Removing one (for a
 * user who lost their phone) asks first, needs a recent sign-in, and follows the user's own rule:
 * the recovery codes go with the last authenticator app (admin/flows/manage-authenticators.ts).
 * Nothing of an authenticator's secrets is read here.
 */
export function registerAuthenticatorAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'mfa.authenticator');
  const listPath = pages.list;

  /** The authenticator the URL names and its user, or undefined (a 404). */
  async function authenticatorOf(request: FastifyRequest): Promise<{ authenticator: Authenticator; user: User } | undefined> {
    const id = idParam((request.params as { id: string }).id);
    const authenticator = id === undefined ? undefined : await ctx.deps.store.authenticators.findById(id);
    const user = authenticator && (await ctx.deps.store.users.findById(authenticator.userId));
    return authenticator && user ? { authenticator, user } : undefined;
  }

  scope.get(pages.routes.list, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'mfa.authenticator', action: 'view' });
    if ('response' in staff) return staff.response;
    const text = queryText(request.query);
    const typed = text('type');
    const type = isAuthenticatorType(typed) ? typed : undefined;
    const user = text('user');
    const query: Record<string, string> = { q: text('q').slice(0, 254), type: type ?? '', user };
    // A user filter that names nobody is a 404, never an empty list that looks like "none set up".
    const userId = idParam(user);
    const filteredBy = userId === undefined ? undefined : await ctx.deps.store.users.findById(userId);
    if (user !== '' && !filteredBy) return reply.callNotFound();
    const after = idParam(text('after'));
    const found = await ctx.deps.store.authenticators.search({
      text: text('q').slice(0, 254),
      ...(type === undefined ? {} : { type }),
      ...(userId === undefined ? {} : { userId }),
      ...(after === undefined ? {} : { afterId: after }),
      limit: PER_PAGE + 1,
    });
    const authenticators = found.slice(0, PER_PAGE);
    const mayViewUsers = staff.grants.may('users.user', 'view');
    const context = {
      title: filteredBy ? msg('Authenticators of {user}', { user: filteredBy.username ?? filteredBy.email }) : msg('Authenticators'),
      admin_root: root,
      list_path: listPath,
      query,
      filtered_by: filteredBy,
      login_by_email: ctx.deps.settings.USERNAME_TYPE === 'email',
      may_delete: staff.grants.may('mfa.authenticator', 'delete'),
      authenticators: authenticators.map((authenticator) => ({
        id: authenticator.id,
        user: authenticator.user,
        user_url: mayViewUsers ? modelPages(urls, 'users.user').change(authenticator.userId) : undefined,
        type: TYPE_LABELS[authenticator.type],
        remove_label: removeLabel(authenticator.type, authenticator.user.username || authenticator.user.email),
        created: instant(authenticator.createdAt),
        last_used: instant(authenticator.lastUsedAt),
      })),
      type_filter: [
        { label: ALL_CHOICE, url: `${listPath}${withQuery(query, { type: undefined })}`, selected: query.type === '' },
        ...AUTHENTICATOR_TYPES.map((choice) => ({ label: TYPE_LABELS[choice], url: `${listPath}${withQuery(query, { type: choice })}`, selected: query.type === choice })),
      ],
      all_users_url: filteredBy ? `${listPath}${withQuery(query, { user: undefined })}` : undefined,
      next_url: found.length > PER_PAGE ? `${listPath}${withQuery(query, { after: String(authenticators.at(-1)!.id) })}` : undefined,
      first_url: after === undefined ? undefined : `${listPath}${withQuery(query, {})}`,
    };
    return renderPage(ctx, request, reply, 'admin/authenticator_list.html', context);
  });

  scope.get(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'mfa.authenticator', action: 'delete' });
    if ('response' in staff) return staff.response;
    const found = await authenticatorOf(request);
    if (!found) return reply.callNotFound();
    const { authenticator, user } = found;
    const context = {
      title: msg('Are you sure?'),
      admin_root: root,
      list_path: listPath,
      target: user,
      authenticator: { id: authenticator.id, type: authenticator.type, label: TYPE_LABELS[authenticator.type] },
      codes_go_too: await recoveryCodesGoWith(ctx.deps, authenticator),
    };
    return renderPage(ctx, request, reply, 'admin/authenticator_delete.html', context);
  });

  scope.post(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'mfa.authenticator', action: 'delete' });
    if ('response' in staff) return staff.response;
    const found = await authenticatorOf(request);
    if (!found) return reply.callNotFound();
    try {
      const removed = await removeAuthenticatorByAdmin(ctx.deps, staff.user, found.authenticator.id, clientOf(request), staff.lastAuthenticatedAt);
      logMailFailures(request, [removed.notification], 'authenticator removed by an administrator');
      await flash(ctx, request, reply, { level: 'success', text: removedMessage(removed.type, removed.codesRemoved, removed.user.username ?? removed.user.email) });
    } catch (error) {
      if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply, error.text);
      if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, request, reply);
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      throw error;
    }
    return redirect(reply, listPath);
  });
}
