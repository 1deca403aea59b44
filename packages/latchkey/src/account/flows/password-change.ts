import { FieldChecks, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { StoredSession } from '../../sessions/model.js';
import type { User } from '../model.js';
import { commitChange, deliverMail } from '../changes.js';
import { securityNotice, type MailOutcome } from '../emails.js';
import type { ClientInfo } from '../../core/client.js';
import { isUsablePassword } from '../passwords/index.js';
import { passwordTheAdapterAccepts, validatePasswordStrength } from '../users.js';
import { msg } from '../../core/i18n/message.js';

export const PASSWORD_MISMATCH = msg('You must type the same password each time.');
export const WRONG_CURRENT_PASSWORD = msg('Please type your current password.');

/** A new password, typed twice (allauth's password1 and password2). */
export interface NewPasswordInput {
  password1: string;
  password2: string;
}

export type { MailOutcome } from '../emails.js';

export type PasswordNotification = 'password_changed' | 'password_set' | 'password_reset';

export interface PasswordChangeResult {
  user: User;
  notification: MailOutcome;
}

export function requiredField(param: string): LatchkeyError {
  return new LatchkeyError('invalid_input', 'This field is required.', { param, reason: 'required' });
}

/**
 * Checks a new password typed twice. Nothing here hashes, and the validators refuse an over-long
 * password before looking at it, so a megabyte of input costs no hashing.
 */
export async function checkNewPassword(deps: Pick<LatchkeyDeps, 'settings' | 'adapter'>, user: User, input: NewPasswordInput): Promise<void> {
  // Both fields judged, as Django's form does: a weak password and a different confirmation are two refusals.
  const checks = new FieldChecks();
  await checks.check(() => {
    if (input.password1 === '') throw requiredField('password1');
    validatePasswordStrength(deps.settings, input.password1, { username: user.username, email: user.email, name: user.name }, 'password1');
  });
  await checks.check(() => {
    if (input.password2 === '') throw requiredField('password2');
    if (input.password1 !== '' && input.password2 !== input.password1) throw new LatchkeyError('password_invalid', PASSWORD_MISMATCH, { param: 'password2', reason: 'password_mismatch' });
  });
  checks.finish();
  await passwordTheAdapterAccepts(deps, input.password1, user, 'password1');
}

/**
 * Replaces the password the caller read (`user.password`), ends the user's sessions (all, or all
 * but `keep`), records the event (`what`: password_changed, _set or _reset) and queues its notice
 * mail, in one transaction; then sends the notice. The compare-and-swap makes two racing changes,
 * or two submissions of one reset key, end with exactly one winner; the loser changes nothing and
 * gets undefined.
 */
export async function replacePassword(
  deps: LatchkeyDeps,
  input: { user: User; encoded: string; what: PasswordNotification; client: ClientInfo; keep?: Pick<StoredSession, 'idHash'> },
): Promise<PasswordChangeResult | undefined> {
  const { user, keep } = input;
  const changed = { ...user, password: input.encoded };
  const notice = await commitChange(deps, async (change) => {
    if (!(await change.repositories.users.replacePassword(user.id, user.password, input.encoded))) return false;
    await change.repositories.sessions.deleteForUser(user.id, keep ? { exceptIdHash: keep.idHash } : {});
    await change.record(input.what, user.id, input.client);
    // allauth's notification mails, to the account's primary address.
    return { queued: await change.queueMail(securityNotice(deps, changed, `account/email/${input.what}`, input.client)) };
  });
  if (notice === false) return undefined;
  return { user: changed, notification: await deliverMail(deps, notice.queued) };
}

export interface ChangePasswordInput extends NewPasswordInput {
  user: User;
  oldPassword: string;
  client: ClientInfo;
  /** The session the change is made from: it survives (the adapter rotates it); every other ends. */
  currentSession?: Pick<StoredSession, 'idHash'>;
}

/**
 * Changes a password, the current one required. Whoever knew the old password (or holds another
 * session) is shut out: every other session ends in the same transaction as the change.
 */
export async function changePassword(deps: LatchkeyDeps, input: ChangePasswordInput): Promise<PasswordChangeResult> {
  const { user } = input;
  await deps.rateLimits.enforce('change_password', { ip: input.client.ip, userId: user.id });
  if (!isUsablePassword(user.password)) throw new LatchkeyError('invalid_input', 'This account has no password yet: set one instead.');
  // Every field's refusal at once; the current password is checked only once the new one is
  // acceptable: its checks cost nothing, the old one's costs a hash.
  const checks = new FieldChecks();
  await checks.check(() => {
    if (input.oldPassword === '') throw requiredField('oldpassword');
  });
  await checks.check(() => checkNewPassword(deps, user, input));
  checks.finish();
  const { valid } = await deps.passwords.verify(input.oldPassword, user.password);
  if (!valid) throw new LatchkeyError('invalid_credentials', WRONG_CURRENT_PASSWORD, { param: 'oldpassword' });
  const encoded = await deps.passwords.hash(input.password1);
  const result = await replacePassword(deps, { user, encoded, what: 'password_changed', client: input.client, keep: input.currentSession });
  // Lost the race to another change: the old password this request proved is no longer current.
  if (!result) throw new LatchkeyError('invalid_credentials', WRONG_CURRENT_PASSWORD, { param: 'oldpassword' });
  return result;
}

export interface SetPasswordInput extends NewPasswordInput {
  user: User;
  client: ClientInfo;
  currentSession?: Pick<StoredSession, 'idHash'>;
}

/**
 * Gives a password to an account that has none (social-only, or made unusable). The swap is on
 * the unusable marker, so it cannot overwrite a password set meanwhile by another request.
 */
export async function setPassword(deps: LatchkeyDeps, input: SetPasswordInput): Promise<PasswordChangeResult> {
  const { user } = input;
  await deps.rateLimits.enforce('change_password', { ip: input.client.ip, userId: user.id });
  const refused = new LatchkeyError('invalid_input', 'This account already has a password: change it instead.');
  if (isUsablePassword(user.password)) throw refused;
  await checkNewPassword(deps, user, input);
  const encoded = await deps.passwords.hash(input.password1);
  const result = await replacePassword(deps, { user, encoded, what: 'password_set', client: input.client, keep: input.currentSession });
  if (!result) throw refused;
  return result;
}
