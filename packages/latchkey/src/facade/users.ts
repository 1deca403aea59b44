import { findUserByLogin, verifyCredentials } from '../account/credentials.js';
import type { User } from '../account/model.js';
import { cleanName } from '../account/names.js';
import { createUser, deactivateUser, setUserPassword, validatePasswordStrength, type CreateUserInput } from '../account/users.js';
import { cleanUserFieldValues } from '../account/user-field-values.js';
import { FieldChecks, LatchkeyError } from '../core/errors.js';
import type { ProjectUserFields } from '../core/user-fields.js';
import type { LatchkeyDeps } from '../deps.js';

/**
 * What `latchkey.users.update` may change: the fields with no flow of their own, and the
 * project's own fields, each held to its declared rules (a form's text is read as its type).
 */
export interface UserUpdate extends Partial<ProjectUserFields> {
  /** The display name; cleaned as every form cleans it (its length, no control characters). */
  name?: string;
  isStaff?: boolean;
  isSuperuser?: boolean;
}

/**
 * The project's way to the accounts (Django's `User.objects` and its helpers). A username or an
 * address is changed through the account pages, where uniqueness and verification are checked;
 * `isActive` through `deactivate`, which also ends the sessions and deletes the API token.
 */
export interface LatchkeyUsers {
  findById(id: number): Promise<User | undefined>;
  /** The account whose primary address this is (the oldest one in a username project where several share it). */
  findByEmail(email: string): Promise<User | undefined>;
  /** By username as people type it (case and width folded); undefined in an email project. */
  findByUsername(username: string): Promise<User | undefined>;
  /** By what a person types at the login (ACCOUNT_LOGIN_METHODS: their username or their address). */
  findByLogin(login: string): Promise<User | undefined>;
  count(): Promise<number>;
  /**
   * Creates the user and its primary address in one transaction, after the password validators
   * (`password: null` makes an account without a usable password). Throws LatchkeyError
   * 'username_taken', 'email_taken', 'password_invalid', 'invalid_username' or 'invalid_email'.
   */
  create(input: CreateUserInput): Promise<User>;
  /**
   * Changes the fields given and returns the stored user; 'not_found' when the account is gone. A
   * name or project field its rules refuse throws 'invalid_input' naming it (`param`), every one
   * at once (refusalsOf).
   */
  update(user: Pick<User, 'id'>, changes: UserUpdate): Promise<User>;
  /** Deactivates the account, ends every session and deletes its API token, in one transaction. */
  deactivate(user: Pick<User, 'id'>): Promise<void>;
  /** Sets a new password after the validators accept it, and ends every session of the user. */
  setPassword(user: User, password: string): Promise<void>;
  /**
   * The user whose login and password these are, or undefined; one password hash either way, so
   * the time it takes does not tell whether the login exists. An inactive account is returned:
   * what it may do is the caller's to decide.
   */
  checkPassword(login: string, password: string): Promise<User | undefined>;
  /** Runs the password validators only: throws LatchkeyError 'password_invalid' listing every problem. */
  validatePassword(password: string, user?: Pick<User, 'username' | 'email' | 'name'>): void;
}

export function usersOf(deps: LatchkeyDeps): LatchkeyUsers {
  const { store } = deps;
  return {
    findById: (id) => store.users.findById(id),
    findByEmail: (email) => store.users.findByEmail(email),
    findByUsername: (username) => (deps.settings.USERNAME_TYPE === 'email' ? Promise.resolve(undefined) : store.users.findByUsername(username)),
    findByLogin: (login) => findUserByLogin(deps, login),
    count: () => store.users.count(),
    create: (input) => createUser(deps, input),
    async update(user, changes) {
      const checks = new FieldChecks();
      const name = changes.name === undefined ? undefined : await checks.check(() => cleanName(changes.name ?? ''));
      const own = await cleanUserFieldValues(deps.userFields, changes, checks);
      checks.finish();
      const updated = await store.users.update(user.id, {
        ...own,
        ...(name === undefined ? {} : { name }),
        ...(changes.isStaff === undefined ? {} : { isStaff: changes.isStaff }),
        ...(changes.isSuperuser === undefined ? {} : { isSuperuser: changes.isSuperuser }),
      });
      if (updated === undefined) throw new LatchkeyError('not_found', 'This account no longer exists.');
      return updated;
    },
    deactivate: (user) => deactivateUser(deps, user),
    setPassword: (user, password) => setUserPassword(deps, user, password),
    checkPassword: (login, password) => verifyCredentials(deps, { login, password }),
    validatePassword(password, user) {
      validatePasswordStrength(deps.settings, password, { username: user?.username ?? null, email: user?.email ?? null, name: user?.name ?? null });
    },
  };
}
