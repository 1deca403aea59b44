import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { parseAdminPermissions, refusalToActOn } from '../../admin/access.js';
import {
  addUserByAdmin,
  adminEditableUserFields,
  adminUserFields,
  changeUserByAdmin,
  deleteUserByAdmin,
  deletionSummary,
  setPasswordByAdmin,
  type UserChangesByAdmin,
} from '../../admin/flows/manage-users.js';
import { endUserSessionsByAdmin } from '../../admin/flows/manage-sessions.js';
import { ADMIN_ACTIONS, ADMIN_MODELS } from '../../admin/model.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, nmsg } from '../../core/i18n/message.js';
import { bodyObject } from '../kit/input.js';
import type { HttpContext } from '../kit/context.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState } from '../kit/html-page.js';
import { clientOf } from '../kit/request-info.js';
import { formValueOfField, userFieldFormValues, userFieldInput, userFieldsFromForm } from '../kit/user-field-form.js';
import { forbidden, requireStaff, type StaffMember } from './guard.js';
import { idParam } from './list-query.js';
import { modelPages } from './paths.js';
import { reauthenticateFirst } from './recent-authentication.js';
import { adminFactOf } from './user-fields.js';

/** Every permission a superuser can grant, as the change form's checkboxes name them ("users.user:view"). */
const PERMISSION_CHOICES = ADMIN_MODELS.flatMap((model) => ADMIN_ACTIONS.map((action) => `${model}:${action}`));

/** The values of a form field sent once or several times (checkboxes). */
function valuesOf(body: unknown, name: string): string[] {
  const value = bodyObject(body)[name];
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((item): item is string => typeof item === 'string');
}

/**
 * A user's pages in the admin (Django's UserAdmin): add, change, the password page, "sign out
 * everywhere" and delete with a confirmation listing what goes with the user. The rules (who may
 * change whom, what needs a superuser, what needs a recent sign-in) are the flows'
 * (admin/flows/manage-users.ts); the pages present their refusals.
 *
 * The project's own fields (docs/user-fields.md) are on the change page unless declared
 * `admin: false`: an input for each one staff may change, judged with the name and the address
 * (every refusal at once, what was typed kept), and a read-only fact for each `admin.edit: false`
 * one, or for all of them when the page has no form (view only).
 */
export function registerUserChangeAdmin(scope: FastifyInstance, ctx: HttpContext): void {
  const { settings } = ctx.deps;
  const { urls } = ctx.deps;
  const root = urls.urlFor('admin:index');
  const pages = modelPages(urls, 'users.user');
  const listPath = pages.list;
  const withUsername = settings.USERNAME_TYPE === 'username';
  const shownFields = adminUserFields(ctx.deps.userFields);
  const editableFields = adminEditableUserFields(ctx.deps.userFields);

  /** The user the URL names, or undefined (a 404) for an id that is not a user's. */
  async function targetOf(request: FastifyRequest): Promise<User | undefined> {
    const id = idParam((request.params as { id: string }).id);
    return id === undefined ? undefined : ctx.deps.store.users.findById(id);
  }

  /** A flow's refusal that is not about the form: 403 for a right the staff member lacks, the reauthentication for a stale sign-in. */
  function refused(request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<FastifyReply> | FastifyReply | undefined {
    if (isLatchkeyError(error, 'permission_denied')) return forbidden(ctx, request, reply, error.text);
    if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, request, reply);
    return undefined;
  }

  async function changeForm(request: FastifyRequest, reply: FastifyReply, staff: StaffMember, target: User, state?: FormState, status = 200): Promise<FastifyReply> {
    const granted = new Set((await ctx.deps.store.adminPermissions.listForUser(target.id)).map((permission) => `${permission.model}:${permission.action}`));
    const form =
      state ??
      emptyForm({
        name: target.name,
        email: target.email,
        is_active: target.isActive ? 'on' : '',
        is_staff: target.isStaff ? 'on' : '',
        is_superuser: target.isSuperuser ? 'on' : '',
        ...userFieldFormValues(editableFields, target),
      });
    // The flows decide who may change whom; the page only leaves out what they would refuse, and says why.
    const outOfReach = await refusalToActOn(ctx.deps, staff.grants, target);
    const mayChange = staff.grants.may('users.user', 'change') && outOfReach === undefined;
    const context = {
      title: msg('Change user'),
      admin_root: root,
      list_path: listPath,
      target,
      form,
      with_username: withUsername,
      may_change: mayChange,
      // The project's fields: inputs in the form, the others as facts (all of them when there is no form).
      user_fields: mayChange ? editableFields.map((field) => userFieldInput(field)) : [],
      field_facts: shownFields.filter((field) => !mayChange || !editableFields.includes(field)).map((field) => adminFactOf(field, target)),
      may_delete: staff.grants.may('users.user', 'delete') && outOfReach === undefined,
      may_end_sessions: staff.grants.may('sessions.session', 'delete') && outOfReach === undefined,
      out_of_reach: staff.grants.may('users.user', 'change') ? outOfReach : undefined,
      superuser: staff.grants.superuser,
      permissions: PERMISSION_CHOICES.map((value) => ({ value, checked: granted.has(value) })),
      authenticators: await ctx.deps.store.authenticators.listForUser(target.id),
    };
    return renderPage(ctx, request, reply, 'admin/user_change.html', context, status);
  }

  scope.get(pages.routes.add, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'add' });
    if ('response' in staff) return staff.response;
    return renderPage(ctx, request, reply, 'admin/user_add.html', { title: msg('Add user'), admin_root: root, list_path: listPath, form: emptyForm(), with_username: withUsername });
  });

  scope.post(pages.routes.add, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'add' });
    if ('response' in staff) return staff.response;
    const fields = formFields(request.body, ['username', 'email', 'password1', 'password2']);
    try {
      const user = await addUserByAdmin(ctx.deps, staff.user, { ...(withUsername ? { username: fields.username } : {}), email: fields.email, password1: fields.password1, password2: fields.password2 }, clientOf(request));
      await flash(ctx, request, reply, { level: 'success', text: msg('The user “{user}” was added. You may edit it again below.', { user: user.username ?? user.email }) });
      return redirect(reply, pages.change(user.id));
    } catch (error) {
      const values = { username: fields.username, email: fields.email };
      return (
        refused(request, reply, error) ??
        renderPage(ctx, request, reply, 'admin/user_add.html', { title: msg('Add user'), admin_root: root, list_path: listPath, form: formWithError(values, error), with_username: withUsername }, refusalStatus(reply, error))
      );
    }
  });

  scope.get(pages.routes.change, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'view' });
    if ('response' in staff) return staff.response;
    const target = await targetOf(request);
    return target ? changeForm(request, reply, staff, target) : reply.callNotFound();
  });

  scope.post(pages.routes.change, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'change' });
    if ('response' in staff) return staff.response;
    const target = await targetOf(request);
    if (!target) return reply.callNotFound();
    const fields = formFields(request.body, ['name', 'email', 'is_active', 'is_staff', 'is_superuser', 'permissions_sent']);
    // The project's fields as sent (an unticked box sends nothing: false); the flow judges them.
    const sentFields = userFieldsFromForm(editableFields, request.body);
    const changes: UserChangesByAdmin = {
      name: fields.name,
      email: fields.email,
      isActive: fields.is_active === 'on',
      isStaff: fields.is_staff === 'on',
      isSuperuser: fields.is_superuser === 'on',
      userFields: sentFields,
    };
    try {
      // Only a superuser's form carries the permissions; another's leaves them as they are.
      if (fields.permissions_sent === '1') changes.permissions = parseAdminPermissions(valuesOf(request.body, 'permissions'));
      await changeUserByAdmin(ctx.deps, staff.user, target, changes, clientOf(request), staff.lastAuthenticatedAt);
    } catch (error) {
      const typed = Object.fromEntries(editableFields.map((field) => [field.name, formValueOfField(field, sentFields[field.name])]));
      return refused(request, reply, error) ?? changeForm(request, reply, staff, target, formWithError({ ...fields, ...typed }, error), refusalStatus(reply, error));
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('The user “{user}” was changed.', { user: target.username ?? target.email }) });
    return redirect(reply, listPath);
  });

  scope.get(urls.route('admin:users_user_password_change'), async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'change' });
    if ('response' in staff) return staff.response;
    const target = await targetOf(request);
    if (!target) return reply.callNotFound();
    const outOfReach = await refusalToActOn(ctx.deps, staff.grants, target);
    if (outOfReach !== undefined) return forbidden(ctx, request, reply, outOfReach);
    return renderPage(ctx, request, reply, 'admin/user_password.html', { title: msg('Change password: {user}', { user: target.username ?? target.email }), admin_root: root, list_path: listPath, target, form: emptyForm({ usable: 'on' }) });
  });

  scope.post(urls.route('admin:users_user_password_change'), async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'change' });
    if ('response' in staff) return staff.response;
    const target = await targetOf(request);
    if (!target) return reply.callNotFound();
    const fields = formFields(request.body, ['usable', 'password1', 'password2']);
    try {
      const input = { usable: fields.usable === 'on', password1: fields.password1, password2: fields.password2 };
      await setPasswordByAdmin(ctx.deps, staff.user, target, input, clientOf(request), staff.lastAuthenticatedAt);
    } catch (error) {
      const title = msg('Change password: {user}', { user: target.username ?? target.email });
      return refused(request, reply, error) ?? renderPage(ctx, request, reply, 'admin/user_password.html', { title, admin_root: root, list_path: listPath, target, form: formWithError({ usable: fields.usable }, error) }, refusalStatus(reply, error));
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('Password changed successfully; the user’s sessions have ended.') });
    return redirect(reply, pages.change(target.id));
  });

  // "Sign out everywhere" from the user's page: the sessions list's flow and permission.
  scope.post(urls.route('admin:users_user_sessions_end'), async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'sessions.session', action: 'delete' });
    if ('response' in staff) return staff.response;
    const target = await targetOf(request);
    if (!target) return reply.callNotFound();
    try {
      const ended = await endUserSessionsByAdmin(ctx.deps, staff.user, target, clientOf(request));
      // Their own sessions, this one among them: signed out, the admin's login comes next.
      if (target.id === staff.user.id) return redirect(reply, urls.urlFor('admin:login'));
      await flash(ctx, request, reply, { level: 'success', text: nmsg('{count} session ended.', '{count} sessions ended.', ended) });
    } catch (error) {
      const answer = refused(request, reply, error);
      if (answer) return answer;
      throw error;
    }
    return redirect(reply, pages.change(target.id));
  });

  scope.get(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'delete' });
    if ('response' in staff) return staff.response;
    const target = await targetOf(request);
    if (!target) return reply.callNotFound();
    const context = { title: msg('Are you sure?'), admin_root: root, list_path: listPath, target, summary: await deletionSummary(ctx.deps, target) };
    return renderPage(ctx, request, reply, 'admin/user_delete.html', context);
  });

  scope.post(pages.routes.delete, async (request, reply) => {
    const staff = await requireStaff(ctx, request, reply, { model: 'users.user', action: 'delete' });
    if ('response' in staff) return staff.response;
    const target = await targetOf(request);
    if (!target) return reply.callNotFound();
    try {
      await deleteUserByAdmin(ctx.deps, staff.user, target, clientOf(request), staff.lastAuthenticatedAt);
    } catch (error) {
      const answer = refused(request, reply, error);
      if (answer) return answer;
      throw error;
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('The user “{user}” was deleted.', { user: target.username ?? target.email }) });
    return redirect(reply, listPath);
  });
}
