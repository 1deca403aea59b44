import type { Settings } from '../config/settings.js';
import { LatchkeyError } from '../core/errors.js';
import type { LatchkeyDeps } from '../deps.js';
import type { User } from '../storage/ports.js';
import { validateEmail, validateUsername } from './identifiers.js';
import { makeUnusablePassword, validatePassword, type PasswordPolicy } from './passwords/index.js';

export function passwordPolicyFrom(settings: Settings): PasswordPolicy {
  return {
    validators: settings.AUTH_PASSWORD_VALIDATORS,
    minLength: settings.PASSWORD_MIN_LENGTH,
    maxBytes: settings.PASSWORD_MAX_BYTES,
    maxSimilarity: 0.7,
  };
}

/** Throws 'password_invalid' with every problem the validators found, in one message. */
export function checkPassword(
  settings: Settings,
  password: string,
  context: { username?: string | null; email?: string | null; name?: string | null },
  param = 'password',
): void {
  const problems = validatePassword(password, context, passwordPolicyFrom(settings));
  if (problems.length > 0) {
    throw new LatchkeyError('password_invalid', problems.map((problem) => problem.message).join(' '), { param, reason: problems[0]?.code });
  }
}

/** The longest name an account may have: the column's size in Django's user model (max_length=255). */
export const NAME_MAX_LENGTH = 255;

export const NAME_TOO_LONG = `The name may have at most ${NAME_MAX_LENGTH} characters.`;
export const NAME_NOT_TEXT = 'The name contains a character that is not text (a null character or half of a surrogate pair).';

/**
 * A person's display name as it is stored: composed (NFC, so that "é" typed as e + accent and as
 * one character are the same name), without surrounding whitespace, at most 255 characters.
 * Characters are counted as code points, as Django counts them, so an emoji is one character and
 * a name that passes here always fits PostgreSQL's varchar(255). A null character or a lone half
 * of a surrogate pair is refused rather than stored: PostgreSQL rejects the first (the request
 * would fail with a 500), and a UTF-8 driver silently replaces the second (the name would change).
 * An empty name is allowed: the field is optional.
 */
export function cleanName(raw: string): string {
  if (raw.includes('\u0000') || /\p{Cs}/u.test(raw)) throw new LatchkeyError('invalid_input', NAME_NOT_TEXT, { param: 'name', reason: 'invalid' });
  const name = raw.normalize('NFC').trim();
  if ([...name].length > NAME_MAX_LENGTH) throw new LatchkeyError('invalid_input', NAME_TOO_LONG, { param: 'name', reason: 'max_length' });
  return name;
}

export interface CreateUserInput {
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
 * Creates a user and, when an email is given, its primary email address, in one transaction:
 * the account is either complete or absent. Uniqueness is the database's to decide, so two
 * parallel creations of the same identifier cannot both succeed.
 */
export async function createUser(deps: Pick<LatchkeyDeps, 'settings' | 'store' | 'passwords' | 'clock'>, input: CreateUserInput): Promise<User> {
  const byEmail = deps.settings.USERNAME_TYPE === 'email';
  if (byEmail && input.username !== undefined) {
    throw new LatchkeyError('invalid_input', 'This project has no usernames: users log in by email.', { param: 'username' });
  }
  const username = byEmail ? undefined : validateUsername(input.username);
  const rawEmail = input.email?.trim() ?? '';
  if (byEmail && rawEmail === '') throw new LatchkeyError('invalid_email', 'An email address is required.', { param: 'email' });
  const email = rawEmail === '' ? '' : validateEmail(rawEmail);
  const name = cleanName(input.name ?? '');

  let encoded: string;
  if (input.password === null) {
    encoded = makeUnusablePassword();
  } else {
    checkPassword(deps.settings, input.password, { username: username ?? null, email, name });
    encoded = await deps.passwords.hash(input.password);
  }

  return deps.store.transaction(async (repositories) => {
    const user = await repositories.users.create({
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
    return user;
  });
}

/**
 * Sets a new password after the validators accept it. Every session of the user ends: whoever
 * held the old password must not stay logged in. (Flows that keep the current session alive
 * rotate it afterwards.)
 */
export async function setUserPassword(deps: Pick<LatchkeyDeps, 'settings' | 'store' | 'passwords' | 'sessions'>, user: User, password: string): Promise<void> {
  checkPassword(deps.settings, password, { username: user.username, email: user.email, name: user.name });
  const encoded = await deps.passwords.hash(password);
  await deps.store.transaction(async (repositories) => {
    await repositories.users.update(user.id, { password: encoded });
    await repositories.sessions.deleteForUser(user.id);
  });
}

/**
 * Deactivates an account and ends all its sessions in one transaction: a deactivated user is
 * locked out at once, and reactivating the account later does not bring old sessions back.
 */
export async function deactivateUser(deps: Pick<LatchkeyDeps, 'store'>, user: Pick<User, 'id'>): Promise<void> {
  await deps.store.transaction(async (repositories) => {
    await repositories.users.update(user.id, { isActive: false });
    await repositories.sessions.deleteForUser(user.id);
  });
}
