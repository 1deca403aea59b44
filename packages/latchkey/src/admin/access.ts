/**
 * Who gets into the admin area and what they may do there: Django's rules (AdminSite.has_permission,
 * ModelBackend.has_perm), with per-user permissions and no groups yet; and, beyond Django, who may
 * change whom (docs/admin.md, "Who may change whom").
 */
import type { User } from '../account/model.js';
import { commitChange, type ChangeWriter } from '../account/changes.js';
import type { ClientInfo } from '../core/client.js';
import { LatchkeyError } from '../core/errors.js';
import { msg, type Message } from '../core/i18n/message.js';
import type { LatchkeyDeps } from '../deps.js';
import type { Repositories } from '../store.js';
import { ADMIN_ACTIONS, ADMIN_MODELS, type AdminAction, type AdminModel, type AdminPermission } from './model.js';

const INVALID_PERMISSION = msg('Select a valid choice: that permission is not one of the available choices.');
const ONLY_SUPERUSERS_GRANT = msg('Only a superuser may change staff or superuser status, or admin permissions.');
const ONLY_SUPERUSERS_CHANGE_SUPERUSERS = msg('Only a superuser may change a superuser.');
const HOLDS_MORE = msg(
  'This account holds admin permissions you do not hold: only a superuser, or a staff member who holds every permission it holds, may change it or act on what is theirs.',
);

/** Whether a user may enter the admin at all: active and staff (Django's AdminSite.has_permission). */
export function mayEnterAdmin(user: Pick<User, 'isActive' | 'isStaff'> | undefined): boolean {
  return user !== undefined && user.isActive && user.isStaff;
}

/**
 * A superuser counts as one in the admin only while they may enter it: Django's has_perm would
 * grant a superuser who is not staff everything, but its admin never lets them in, and answering
 * the same here keeps the grants from ever outrunning the door.
 */
function isAdminSuperuser(user: Pick<User, 'isActive' | 'isStaff' | 'isSuperuser'>): boolean {
  return mayEnterAdmin(user) && user.isSuperuser;
}

function isAdminModel(value: string): value is AdminModel {
  return (ADMIN_MODELS as readonly string[]).includes(value);
}

function isAdminAction(value: string): value is AdminAction {
  return (ADMIN_ACTIONS as readonly string[]).includes(value);
}

/** The form value of a permission, as parseAdminPermissions reads it and the audit trail names it. */
function permissionKey(permission: AdminPermission): string {
  return `${permission.model}:${permission.action}`;
}

/**
 * What a user may do in the admin: everything for an active superuser, their granted permissions
 * for other active staff, nothing otherwise. `view` is implied by `change` (Django).
 */
export interface AdminGrants {
  readonly superuser: boolean;
  may(model: AdminModel, action: AdminAction): boolean;
  /** The models they may at least view, in the order of ADMIN_MODELS. */
  models(): AdminModel[];
}

function grants(superuser: boolean, permissions: readonly AdminPermission[]): AdminGrants {
  const granted = new Set(permissions.map(permissionKey));
  // The model and action are checked even for a superuser: a door may pass on values read from a
  // URL, and a name this version does not know must not open anything.
  const may = (model: AdminModel, action: AdminAction): boolean =>
    isAdminModel(model) &&
    isAdminAction(action) &&
    (superuser || granted.has(permissionKey({ model, action })) || (action === 'view' && granted.has(permissionKey({ model, action: 'change' }))));
  return { superuser, may, models: () => ADMIN_MODELS.filter((model) => may(model, 'view')) };
}

export async function adminGrantsOf(deps: Pick<LatchkeyDeps, 'store'>, user: User): Promise<AdminGrants> {
  if (!mayEnterAdmin(user)) return grants(false, []);
  if (isAdminSuperuser(user)) return grants(true, []);
  return grants(false, await deps.store.adminPermissions.listForUser(user.id));
}

const NO_PERMISSION = msg('You do not have permission to do this.');

/**
 * For an admin flow: the actor's grants when they may do `action` on `model`, 'permission_denied'
 * otherwise. Flows check this themselves, not only the page, so that no door can skip it.
 */
export async function requireAdminPermission(deps: Pick<LatchkeyDeps, 'store'>, actor: User, model: AdminModel, action: AdminAction): Promise<AdminGrants> {
  const granted = await adminGrantsOf(deps, actor);
  if (!granted.may(model, action)) throw new LatchkeyError('permission_denied', NO_PERMISSION);
  return granted;
}

/**
 * The operator at the server's shell, running a management command (`manage changepassword`,
 * `create-token`, `socialapp`, ...). They are not a staff member: whoever can run the command
 * already holds the database and the secret key, as with Django's manage.py.
 */
export const MANAGEMENT_COMMAND = 'management_command';

/** Who acts on an account: a staff member in the admin (what they may do there), or the operator. */
export type AccountActor = AdminGrants | typeof MANAGEMENT_COMMAND;

/**
 * Who may change whom: the one place it is decided, for every door (the admin's flows call it for
 * a user's password, addresses, flags, permissions and deletion, and for their sessions, API
 * token, authenticators and social accounts; the management commands call it too). Returns why
 * the actor may not act on the target (a msg(), shown in the reader's language), or undefined
 * when they may.
 *
 * A per-model permission must never reach past the staff member's own standing: whoever sets
 * another's password or address can sign in as them and do what they may do. So staff act on an
 * account only when they hold every permission it holds (`view` being held by whoever may
 * `change`), and never on a superuser, who holds them all. What the account holds counts even
 * while it is inactive or not staff, since one tick of a superuser would give it back. A superuser
 * may act on anyone, and so may the operator at the shell.
 */
export async function refusalToActOn(deps: Pick<LatchkeyDeps, 'store'>, actor: AccountActor, target: Pick<User, 'id' | 'isSuperuser'>): Promise<Message | undefined> {
  if (actor === MANAGEMENT_COMMAND || actor.superuser) return undefined;
  if (target.isSuperuser) return ONLY_SUPERUSERS_CHANGE_SUPERUSERS;
  const held = await deps.store.adminPermissions.listForUser(target.id);
  return held.every(({ model, action }) => actor.may(model, action)) ? undefined : HOLDS_MORE;
}

/** refusalToActOn as a refusal: 'permission_denied', with the reason, when the actor may not act on the target. */
export async function requireMayActOn(deps: Pick<LatchkeyDeps, 'store'>, actor: AccountActor, target: Pick<User, 'id' | 'isSuperuser'>): Promise<void> {
  const refusal = await refusalToActOn(deps, actor, target);
  if (refusal !== undefined) throw new LatchkeyError('permission_denied', refusal);
}

/**
 * Nobody grants a permission they do not hold. Only a superuser holds every one, so only a
 * superuser grants or removes staff status, superuser status or admin permissions (Django's
 * `change_user` alone would let a staff member make themself superuser).
 */
export function requireMayGrant(granted: AdminGrants): void {
  if (!granted.superuser) throw new LatchkeyError('permission_denied', ONLY_SUPERUSERS_GRANT);
}

/** Parses form values like "users.user:change" into permissions (each once, in the order of the models and actions). */
export function parseAdminPermissions(values: readonly string[]): AdminPermission[] {
  const parsed = new Map<string, AdminPermission>();
  for (const value of values) {
    const [model = '', action = '', ...rest] = value.split(':');
    if (rest.length > 0 || !isAdminModel(model) || !isAdminAction(action)) {
      throw new LatchkeyError('invalid_input', INVALID_PERMISSION, { param: 'permissions' });
    }
    parsed.set(value, { model, action });
  }
  return inOrder([...parsed.values()]);
}

function inOrder(permissions: AdminPermission[]): AdminPermission[] {
  return permissions.sort(
    (a, b) => ADMIN_MODELS.indexOf(a.model) - ADMIN_MODELS.indexOf(b.model) || ADMIN_ACTIONS.indexOf(a.action) - ADMIN_ACTIONS.indexOf(b.action),
  );
}

/**
 * The permissions as they are stored: each once, in the order of the models and actions. The
 * type says they are valid, but a door may have cast values it read from a form: one this
 * version does not know is refused ('invalid_input').
 */
export function normalizeAdminPermissions(permissions: readonly AdminPermission[]): AdminPermission[] {
  if (!permissions.every(({ model, action }) => isAdminModel(model) && isAdminAction(action))) {
    throw new LatchkeyError('invalid_input', INVALID_PERMISSION, { param: 'permissions' });
  }
  return inOrder([...new Map(permissions.map((permission) => [permissionKey(permission), permission])).values()]);
}

/** Whether two normalized sets of permissions are the same. */
export function samePermissions(a: readonly AdminPermission[], b: readonly AdminPermission[]): boolean {
  return a.map(permissionKey).join(' ') === b.map(permissionKey).join(' ');
}

/**
 * Replaces the user's permissions with these (normalized), inside the caller's transaction, so a
 * form that changes the user too saves all of it or nothing. Returns whether the set changed.
 */
export async function replaceAdminPermissionsIn(repositories: Repositories, targetId: number, wanted: readonly AdminPermission[]): Promise<boolean> {
  const before = await repositories.adminPermissions.listForUser(targetId);
  // Written even when unchanged, so that a user deleted meanwhile is reported ('not_found').
  await repositories.adminPermissions.replaceForUser(targetId, wanted);
  return !samePermissions(before, wanted);
}

/**
 * The audit trail's record of a change of permissions, in the change's transaction; made only when
 * the set changed (saving a form untouched leaves none).
 */
export async function recordPermissionsChanged(change: Pick<ChangeWriter, 'record'>, actor: User, target: User, granted: readonly AdminPermission[], client: ClientInfo): Promise<void> {
  await change.record('admin_permissions_changed', actor.id, client, { target: target.id, permissions: granted.map(permissionKey) });
}

/**
 * A superuser sets another user's admin permissions, replacing those they had. Only an active
 * staff superuser may ('permission_denied' otherwise); an unknown model or action is refused
 * ('invalid_input') before anything changes. The permissions take effect while the target is
 * active staff, so a door may set them in the same form that makes the user staff: the admin's
 * change page does, through admin/flows/manage-users.ts, which also asks for a recent sign-in.
 */
export async function setAdminPermissions(
  deps: LatchkeyDeps,
  actor: User,
  target: User,
  permissions: readonly AdminPermission[],
  client: ClientInfo,
): Promise<void> {
  requireMayGrant(await adminGrantsOf(deps, actor));
  const wanted = normalizeAdminPermissions(permissions);
  // The permissions and their audit record: both, or (a crash, a failure) neither.
  await commitChange(deps, async (change) => {
    if (await replaceAdminPermissionsIn(change.repositories, target.id, wanted)) await recordPermissionsChanged(change, actor, target, wanted, client);
  });
}
