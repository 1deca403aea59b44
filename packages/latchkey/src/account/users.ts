import type { Settings } from '../config/settings.js';
import { FieldChecks, isLatchkeyError, LatchkeyError, LatchkeyFieldErrors } from '../core/errors.js';
import type { LatchkeyDeps } from '../deps.js';
import type { PasswordOwner } from './adapter.js';
import type { User } from './model.js';
import type { Repositories } from '../store.js';
import { commitChange, type ChangeWriter } from './changes.js';
import { validateEmail, validateUsername } from '../core/identifiers.js';
import { cleanName } from './names.js';
import { makeUnusablePassword, validatePassword, type PasswordPolicy } from './passwords/index.js';
import { cleanUserFieldValues } from './user-field-values.js';
import type { ProjectUserFields, UserFieldValue } from '../core/user-fields.js';

export function passwordPolicyFrom(settings: Settings): PasswordPolicy {
  return {
    validators: settings.AUTH_PASSWORD_VALIDATORS,
    minLength: settings.PASSWORD_MIN_LENGTH,
    maxBytes: settings.PASSWORD_MAX_BYTES,
    maxSimilarity: 0.7,
  };
}

/**
 * Throws 'password_invalid' with every problem the validators found, each its own refusal of
 * `param` (as Django lists each validator's error): the doors show them all (refusalsOf), each
 * translated. Its English `message`, for the CLI and logs, is every problem in one line.
 */
export function validatePasswordStrength(
  settings: Settings,
  password: string,
  context: { username?: string | null; email?: string | null; name?: string | null },
  param = 'password',
): void {
  const [first, ...rest] = validatePassword(password, context, passwordPolicyFrom(settings)).map(
    (problem) => new LatchkeyError('password_invalid', problem.message, { param, reason: problem.code }),
  );
  if (first === undefined) return;
  if (rest.length === 0) throw first;
  const error = new LatchkeyFieldErrors([first, ...rest]);
  error.message = [first, ...rest].map((refusal) => refusal.message).join(' ');
  throw error;
}

/**
 * A new password as the adapter's cleanPassword judges it, after the validators: its refusal
 * shown on `param`, the form's password field, unless it named a field itself.
 */
export async function passwordTheAdapterAccepts(deps: Pick<LatchkeyDeps, 'adapter'>, password: string, owner: PasswordOwner, param: string): Promise<string> {
  try {
    return await deps.adapter.cleanPassword(password, owner);
  } catch (error) {
    if (!isLatchkeyError(error) || error.param !== undefined) throw error;
    throw new LatchkeyError(error.code, error.text, { param, ...(error.reason === undefined ? {} : { reason: error.reason }) });
  }
}

/**
 * A new user's fields, for `latchkey.users.create`: a password given is checked against the
 * project's password policy, and the project's own fields given by their rules (docs/user-fields.md).
 */
export interface CreateUserInput extends Partial<ProjectUserFields> {
  /** Required when the project logs in by username; refused when it logs in by email. */
  username?: string;
  /** Required when the project logs in by email; optional otherwise. */
  email?: string;
  /** Null makes an account without a usable password (social-only, or set later). */
  password: string | null;
  name?: string;
  isStaff?: boolean;
  isSuperuser?: boolean;
  emailVerified: boolean;
}

/**
 * A new user's fields as createUser stores them, every field judged and every refusal given at
 * once (LatchkeyFieldErrors); nothing is looked up or hashed. `passwordParam` names the form's
 * password field (the admin's is password1).
 */
export async function checkNewUser(
  deps: Pick<LatchkeyDeps, 'settings' | 'userFields'>,
  input: CreateUserInput,
  passwordParam = 'password',
): Promise<{ username: string | undefined; email: string; name: string; own: Record<string, UserFieldValue> }> {
  const byEmail = deps.settings.USERNAME_TYPE === 'email';
  const checks = new FieldChecks();
  const username = await checks.check(() => {
    if (byEmail && input.username !== undefined) {
      throw new LatchkeyError('invalid_input', 'This project has no usernames: users log in by email.', { param: 'username' });
    }
    return byEmail ? undefined : validateUsername(input.username);
  });
  const email =
    (await checks.check(() => {
      const rawEmail = input.email?.trim() ?? '';
      if (byEmail && rawEmail === '') throw new LatchkeyError('invalid_email', 'An email address is required.', { param: 'email' });
      return rawEmail === '' ? '' : validateEmail(rawEmail);
    })) ?? '';
  const name = (await checks.check(() => cleanName(input.name ?? ''))) ?? '';
  const own = await cleanUserFieldValues(deps.userFields, input, checks);
  const { password } = input;
  if (password !== null) await checks.check(() => validatePasswordStrength(deps.settings, password, { username: username ?? null, email, name }, passwordParam));
  checks.finish();
  return { username, email, name, own };
}

/**
 * Creates a user and, when an email is given, its primary email address, in one transaction:
 * the account is either complete or absent. Uniqueness is the database's to decide, so two
 * parallel creations of the same identifier cannot both succeed.
 */
export async function createUser(
  deps: Pick<LatchkeyDeps, 'settings' | 'userFields' | 'store' | 'passwords' | 'clock' | 'events' | 'mailOutbox' | 'adapter'>,
  input: CreateUserInput,
  /**
   * What belongs with the new user, written in the same transaction: rows (a social account), its
   * audit records (user_signed_up) and mails (the confirmation), so a crash keeps all or none.
   */
  withUser?: (change: ChangeWriter, user: User) => Promise<void>,
): Promise<User> {
  const { username, email, name, own } = await checkNewUser(deps, input);
  const encoded = input.password === null ? makeUnusablePassword() : await deps.passwords.hash(input.password);

  return commitChange(deps, async (change) => {
    const { repositories } = change;
    const user = await repositories.users.create({
      ...own,
      ...(username === undefined ? {} : { username }),
      email,
      name,
      password: encoded,
      isStaff: input.isStaff ?? false,
      isSuperuser: input.isSuperuser ?? false,
      dateJoined: deps.clock.now(),
    });
    if (email !== '') {
      await repositories.emailAddresses.add({ userId: user.id, email, verified: input.emailVerified, primary: true });
    }
    await withUser?.(change, user);
    await deps.adapter.onUserCreated(user, repositories.projectDatabase);
    return user;
  });
}

/**
 * Sets a new password after the validators accept it. Every session of the user ends: whoever
 * held the old password must not stay logged in. (Flows that keep the current session alive
 * rotate it afterwards.)
 */
export async function setUserPassword(deps: Pick<LatchkeyDeps, 'settings' | 'store' | 'passwords' | 'sessions'>, user: User, password: string): Promise<void> {
  validatePasswordStrength(deps.settings, password, { username: user.username, email: user.email, name: user.name });
  const encoded = await deps.passwords.hash(password);
  await deps.store.transaction(async (repositories) => {
    await repositories.users.update(user.id, { password: encoded });
    await repositories.sessions.deleteForUser(user.id);
  });
}

/**
 * What deactivating an account is, wherever it is done (the admin's change page and bulk action,
 * a project's own code): the flag, every session ended and the API token deleted, inside the
 * caller's transaction. The user is locked out at once, by browser and by token alike, and
 * reactivating the account later brings back neither an old session nor the old key: a new token
 * has to be made, as after any deletion.
 */
export async function deactivateUserIn(deps: Pick<LatchkeyDeps, 'adapter'>, repositories: Repositories, userId: number): Promise<void> {
  const user = await repositories.users.update(userId, { isActive: false });
  await repositories.sessions.deleteForUser(userId);
  await repositories.apiTokens.deleteForUser(userId);
  // The project's rows follow, in the same transaction (AccountAdapter.onUserDeactivated).
  if (user) await deps.adapter.onUserDeactivated(user, repositories.projectDatabase);
}

/** Deactivates an account in one transaction of its own (deactivateUserIn): all of it, or nothing. */
export async function deactivateUser(deps: Pick<LatchkeyDeps, 'store' | 'adapter'>, user: Pick<User, 'id'>): Promise<void> {
  await deps.store.transaction((repositories) => deactivateUserIn(deps, repositories, user.id));
}

/** Whether any account has this address: as its primary (user) address or in its address list, verified or not. */
export async function emailInUse(deps: Pick<LatchkeyDeps, 'store'>, email: string): Promise<boolean> {
  const claims = await deps.store.emailAddresses.listByEmail(email);
  const holder = await deps.store.users.findByEmail(email);
  return claims.length > 0 || holder !== undefined;
}
