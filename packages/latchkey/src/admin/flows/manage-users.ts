/**
 * What the admin does to users, for its pages (and any later admin API): each change is checked
 * against the actor's rights here, not only by the page, so that no door can skip a rule.
 *
 * Three rules beyond the per-model permissions, because Django's permissions alone would let any
 * staff member with "change user" make themself superuser, or take over a staff member who may do
 * more: only a superuser may grant or remove staff or superuser status or admin permissions
 * (access.ts, requireMayGrant); staff change, set the password of, or delete an account only when
 * they hold every permission it holds (access.ts, requireMayActOn: the one place that decides who
 * may change whom); and nobody locks themself out (refuseOwnLockout).
 *
 * The sensitive changes (granting or removing power, a new address, a password, a deletion) need
 * the staff member to have signed in or reauthenticated in the last few minutes, as allauth asks
 * before a user's own sensitive change: the door passes when that was (`lastAuthenticatedAt`, from
 * the session), and a stale one is refused with 'reauthentication_required', which the pages
 * present as the account pages' reauthentication. It is asked only once the actor is known to
 * have the right, so that a refusal never turns into a prompt for a password.
 */
import { cleanName } from '../../account/names.js';
import { commitChange } from '../../account/changes.js';
import type { User } from '../../account/model.js';
import { checkNewUser, createUser, deactivateUserIn, validatePasswordStrength } from '../../account/users.js';
import { cleanUserFieldValues } from '../../account/user-field-values.js';
import { makeUnusablePassword } from '../../account/passwords/index.js';
import type { ClientInfo } from '../../core/client.js';
import { FieldChecks, isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import { msg, type Message } from '../../core/i18n/message.js';
import { validateEmail } from '../../core/identifiers.js';
import { userFieldValueOf, type UserField, type UserFieldValue } from '../../core/user-fields.js';
import type { Repositories } from '../../store.js';
import { voidOtherClaims } from '../../account/email-confirmation.js';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { LatchkeyDeps } from '../../deps.js';
import {
  normalizeAdminPermissions,
  recordPermissionsChanged,
  replaceAdminPermissionsIn,
  requireAdminPermission,
  requireMayActOn,
  requireMayGrant,
  samePermissions,
  type AdminGrants,
} from '../access.js';
import type { AdminPermission } from '../model.js';

export const PASSWORDS_DIFFER = msg('The two password fields didn’t match.');

const OWN_ACCESS = msg('You cannot take away your own access to the admin: ask another superuser.');
const OWN_ACCOUNT = msg('You cannot delete your own account here.');
const OWN_PASSWORD = msg('You cannot make your own password unusable: you would be locked out of the admin. Ask another superuser.');

/** What a change leaves of an account: only the fields it sets. */
interface AccountAfter {
  deleted?: boolean;
  isActive?: boolean;
  isStaff?: boolean;
  isSuperuser?: boolean;
  passwordUsable?: boolean;
}

/**
 * Nobody takes away their own way into the admin (Django's admin refuses a superuser removing
 * their own access in the same spirit): not their account, their active or staff flag, their
 * superuser status, nor a usable password. Another superuser can; asking one keeps a slip of the
 * mouse from locking the last one out. 'permission_denied' with the reason.
 */
function refuseOwnLockout(actor: User, target: User, after: AccountAfter): void {
  if (target.id !== actor.id) return;
  const refuse = (message: Message) => new LatchkeyError('permission_denied', message);
  if (after.deleted === true) throw refuse(OWN_ACCOUNT);
  if (after.isActive === false || after.isStaff === false || (target.isSuperuser && after.isSuperuser === false)) throw refuse(OWN_ACCESS);
  if (after.passwordUsable === false) throw refuse(OWN_PASSWORD);
}

/** The actor's right to `action` on users, and whether they are a superuser; 'permission_denied' otherwise. */
async function requireGrant(deps: Pick<LatchkeyDeps, 'store'>, actor: User, action: 'add' | 'change' | 'delete'): Promise<AdminGrants> {
  return requireAdminPermission(deps, actor, 'users.user', action);
}

export interface NewUserByAdmin {
  username?: string;
  email: string;
  password1: string;
  password2: string;
}

/** Django's "Add user": the login and a password typed twice; the rest is set on the change page. */
export async function addUserByAdmin(deps: LatchkeyDeps, actor: User, input: NewUserByAdmin, client: ClientInfo): Promise<User> {
  await requireGrant(deps, actor, 'add');
  const fields = { ...(input.username === undefined ? {} : { username: input.username }), email: input.email, password: input.password1, emailVerified: false };
  // Every field's refusal at once, each under the form's own field (the password's on password1).
  const checks = new FieldChecks();
  await checks.check(() => checkNewUser(deps, fields, 'password1'));
  await checks.check(() => {
    if (input.password1 !== input.password2) throw new LatchkeyError('password_invalid', PASSWORDS_DIFFER, { param: 'password2' });
  });
  checks.finish();
  // The account and the record of who added it: one transaction.
  return createUser(deps, fields, (change, user) => change.record('admin_user_changed', actor.id, client, { target: user.id, change: 'added' }));
}

export interface UserChangesByAdmin {
  name: string;
  /** The primary address; an address other than the current one is added, marked verified (staff vouch for it) and made primary. */
  email: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  /** Only a superuser's form sends them; undefined leaves them as they are. */
  permissions?: readonly AdminPermission[];
  /**
   * The project's fields (docs/user-fields.md), as sent: a form's text, or whether a checkbox was
   * ticked. Only those staff may change (adminEditableUserFields) are read; the others, and any
   * left out, stay as they are.
   */
  userFields?: Readonly<Record<string, unknown>>;
}

/** The project's fields the admin shows: every one not declared `admin: false`, in declaration order. */
export function adminUserFields(fields: readonly UserField[]): UserField[] {
  return fields.filter((field) => field.admin !== false);
}

/** The project's fields staff may change on a user's page: shown, and not declared `admin: { edit: false }` (those are read-only there). */
export function adminEditableUserFields(fields: readonly UserField[]): UserField[] {
  return fields.filter((field) => field.admin !== false && field.admin.edit);
}

/** The names of the project's fields whose value `clean` changes: what the audit record lists, never the values. */
function changedUserFields(target: User, clean: Record<string, UserFieldValue>, fields: readonly UserField[]): string[] {
  return fields.filter((field) => field.name in clean && clean[field.name] !== userFieldValueOf(target, field)).map((field) => field.name);
}

/**
 * The fields a change would alter that need a recent sign-in: granting or removing power, and the
 * address. Only what actually changes counts: a superuser's form always sends the permissions,
 * and saving them as they were (with a new name, say) grants nothing.
 */
export async function sensitiveChanges(deps: Pick<LatchkeyDeps, 'store'>, target: User, changes: UserChangesByAdmin): Promise<string[]> {
  const fields: string[] = [];
  if (changes.isStaff !== target.isStaff) fields.push('staff status');
  if (changes.isSuperuser !== target.isSuperuser) fields.push('superuser status');
  if (changes.permissions !== undefined) {
    const current = await deps.store.adminPermissions.listForUser(target.id);
    if (!samePermissions(current, normalizeAdminPermissions(changes.permissions))) fields.push('permissions');
  }
  // Whoever holds the address can reset the password: changing it hands over the account.
  if (newEmail(target, changes) !== undefined) fields.push('email');
  return fields;
}

/** The address the change sets, normalized, or undefined when it keeps the current one. Throws 'invalid_email' for a bad one. */
function newEmail(target: User, changes: Pick<UserChangesByAdmin, 'email'>): string | undefined {
  const typed = changes.email.trim();
  if (typed === '' && target.email === '') return undefined;
  if (typed === '') throw new LatchkeyError('invalid_email', 'Enter an email address (addresses are removed on the email addresses page).', { param: 'email' });
  const email = validateEmail(typed);
  return email === target.email ? undefined : email;
}

export const ADDRESS_VERIFIED_ELSEWHERE = msg('Another account has verified this address.');

/**
 * Makes `email` the user's verified primary address, in the transaction of the change: added if
 * the user does not have it yet, verified (other accounts' unverified claims to it are void, as
 * after a confirmation link), then primary.
 */
async function setPrimaryEmail(repositories: Repositories, userId: number, email: string): Promise<void> {
  const address = (await repositories.emailAddresses.findForUser(userId, email)) ?? (await repositories.emailAddresses.add({ userId, email, verified: false, primary: false }));
  const verified = await repositories.emailAddresses.markVerified(address.id);
  if (!verified) throw new LatchkeyError('not_found', 'The address was removed meanwhile: try again.', { param: 'email' });
  await voidOtherClaims(repositories, verified);
  await repositories.emailAddresses.setPrimary(userId, verified.id);
}

/**
 * The change page's save, all of it in one transaction: the fields (the project's own among
 * them), the address, the permissions, and deactivation (account/users.ts's deactivateUserIn:
 * sessions ended, API token deleted), so a deactivated account is locked out everywhere at once.
 * The name, the address and the project's fields are judged together, and every refusal comes
 * back at once (LatchkeyFieldErrors), as Django's ModelForm shows every field's errors; then
 * nothing is written. A sensitive change (sensitiveChanges) needs a recent sign-in; a name or a
 * project field alone does not.
 */
export async function changeUserByAdmin(
  deps: LatchkeyDeps,
  actor: User,
  target: User,
  changes: UserChangesByAdmin,
  client: ClientInfo,
  lastAuthenticatedAt: Date | undefined,
): Promise<User> {
  const granted = await requireGrant(deps, actor, 'change');
  await requireMayActOn(deps, granted, target);
  if (changes.isStaff !== target.isStaff || changes.isSuperuser !== target.isSuperuser || changes.permissions !== undefined) requireMayGrant(granted);
  refuseOwnLockout(actor, target, changes);
  const checks = new FieldChecks();
  const name = await checks.check(() => cleanName(changes.name));
  const email = await checks.check(() => newEmail(target, changes));
  const editable = adminEditableUserFields(deps.userFields);
  const own = await cleanUserFieldValues(editable, changes.userFields ?? {}, checks);
  checks.finish();
  // Past finish(), every check passed: the name is clean, and an undefined email keeps the current one.
  const cleanedName = name!;
  const permissions = changes.permissions === undefined ? undefined : normalizeAdminPermissions(changes.permissions);
  if ((await sensitiveChanges(deps, target, changes)).length > 0) requireRecentAuthentication(deps, lastAuthenticatedAt);
  const deactivating = target.isActive && !changes.isActive;
  const changed = [
    ...Object.entries({ name: cleanedName !== target.name, email: email !== undefined, is_active: changes.isActive !== target.isActive, is_staff: changes.isStaff !== target.isStaff, is_superuser: changes.isSuperuser !== target.isSuperuser })
      .filter(([, differs]) => differs)
      .map(([field]) => field),
    ...changedUserFields(target, own, editable),
  ];
  // The change and its audit records commit together: a crash leaves both or neither.
  await commitChange(deps, async (change) => {
    const { repositories } = change;
    await repositories.users.update(target.id, { ...own, name: cleanedName, isActive: changes.isActive, isStaff: changes.isStaff, isSuperuser: changes.isSuperuser });
    if (email !== undefined) {
      try {
        await setPrimaryEmail(repositories, target.id, email);
      } catch (error) {
        if (isLatchkeyError(error, 'email_taken')) throw new LatchkeyError('email_taken', ADDRESS_VERIFIED_ELSEWHERE, { param: 'email' });
        throw error;
      }
    }
    if (deactivating) await deactivateUserIn(deps, repositories, target.id);
    if (permissions !== undefined && (await replaceAdminPermissionsIn(repositories, target.id, permissions))) {
      await recordPermissionsChanged(change, actor, target, permissions, client);
    }
    if (changed.length > 0) await change.record('admin_user_changed', actor.id, client, { target: target.id, change: 'changed', fields: changed });
  });
  return (await deps.store.users.findById(target.id)) ?? target;
}

/**
 * Django's password page: a new password typed twice, or none (an unusable password, never one's
 * own), after a recent sign-in. Every session of the user ends.
 */
export async function setPasswordByAdmin(
  deps: LatchkeyDeps,
  actor: User,
  target: User,
  input: { usable: boolean; password1: string; password2: string },
  client: ClientInfo,
  lastAuthenticatedAt: Date | undefined,
): Promise<void> {
  await requireMayActOn(deps, await requireGrant(deps, actor, 'change'), target);
  refuseOwnLockout(actor, target, { passwordUsable: input.usable });
  requireRecentAuthentication(deps, lastAuthenticatedAt);
  let encoded: string;
  if (input.usable) {
    if (input.password1 !== input.password2) throw new LatchkeyError('password_invalid', PASSWORDS_DIFFER, { param: 'password2' });
    validatePasswordStrength(deps.settings, input.password1, { username: target.username, email: target.email, name: target.name });
    encoded = await deps.passwords.hash(input.password1);
  } else {
    encoded = makeUnusablePassword();
  }
  // The password, the sessions it ends and the audit record: all of it, or none.
  await commitChange(deps, async (change) => {
    await change.repositories.users.update(target.id, { password: encoded });
    await change.repositories.sessions.deleteForUser(target.id);
    await change.record('admin_user_changed', actor.id, client, { target: target.id, change: input.usable ? 'password_set' : 'password_unusable' });
  });
}

/** What goes with a user when it is deleted, for the confirmation page. */
export async function deletionSummary(deps: Pick<LatchkeyDeps, 'store'>, target: User): Promise<{ addresses: number; socialAccounts: number; authenticators: number; sessions: number; apiToken: boolean }> {
  const [addresses, socialAccounts, authenticators, sessions, apiToken] = await Promise.all([
    deps.store.emailAddresses.listForUser(target.id),
    deps.store.socialAccounts.listForUser(target.id),
    deps.store.authenticators.listForUser(target.id),
    deps.store.sessions.listForUser(target.id),
    deps.store.apiTokens.findForUser(target.id),
  ]);
  return { addresses: addresses.length, socialAccounts: socialAccounts.length, authenticators: authenticators.length, sessions: sessions.length, apiToken: apiToken !== undefined };
}

/** Deletes the user and everything that goes with them (deletionSummary), after a recent sign-in. */
export async function deleteUserByAdmin(deps: LatchkeyDeps, actor: User, target: User, client: ClientInfo, lastAuthenticatedAt: Date | undefined): Promise<void> {
  await requireMayActOn(deps, await requireGrant(deps, actor, 'delete'), target);
  refuseOwnLockout(actor, target, { deleted: true });
  requireRecentAuthentication(deps, lastAuthenticatedAt);
  await commitChange(deps, async (change) => {
    await deps.adapter.onUserDeleting(target, change.repositories.projectDatabase);
    await change.repositories.users.delete(target.id);
    await change.record('admin_user_changed', actor.id, client, { target: target.id, change: 'deleted', username: target.username, email: target.email });
  });
}

/** Deactivation alone (a bulk action): as a change of the active flag. */
export async function deactivateUserByAdmin(deps: LatchkeyDeps, actor: User, target: User, client: ClientInfo): Promise<void> {
  await requireMayActOn(deps, await requireGrant(deps, actor, 'change'), target);
  refuseOwnLockout(actor, target, { isActive: false });
  await commitChange(deps, async (change) => {
    await deactivateUserIn(deps, change.repositories, target.id);
    await change.record('admin_user_changed', actor.id, client, { target: target.id, change: 'changed', fields: ['is_active'] });
  });
}
