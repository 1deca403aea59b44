import type { LoginMethod } from '../../account/flows/login.js';
import type { Settings } from '../../config/settings.js';
import type { AuthenticatorType } from '../../mfa/model.js';
import type { User } from '../../account/model.js';

/**
 * How a user proved who they are in a session, one record per proof, as the headless API lists
 * them (`methods`): the password at login, a code at the second step, a reauthentication later.
 * `at` is seconds since the epoch, as allauth gives it.
 */
export type AuthenticationRecord =
  | { method: 'password'; at: number; username?: string; email?: string }
  | { method: 'mfa'; at: number; type: AuthenticatorType; reauthenticated?: true };

const seconds = (at: Date): number => at.getTime() / 1000;

/**
 * A proof by password. A reauthentication by password is recorded like a login by password:
 * the published schema cannot tell a password record with `reauthenticated` from one without
 * (two of its alternatives would match), so the flag is left out and clients see the time.
 */
export function passwordRecord(settings: Pick<Settings, 'USERNAME_TYPE'>, user: User, at: Date): AuthenticationRecord {
  if (settings.USERNAME_TYPE === 'username' && user.username !== null) return { method: 'password', at: seconds(at), username: user.username };
  return { method: 'password', at: seconds(at), email: user.email };
}

export function codeRecord(type: AuthenticatorType, at: Date, reauthenticated = false): AuthenticationRecord {
  return { method: 'mfa', at: seconds(at), type, ...(reauthenticated ? { reauthenticated: true as const } : {}) };
}

/** What a completed login proved, in the order it proved it. */
export function loginRecords(settings: Pick<Settings, 'USERNAME_TYPE'>, user: User, method: LoginMethod, at: Date): AuthenticationRecord[] {
  const password = passwordRecord(settings, user, at);
  switch (method) {
    case 'password+totp':
      return [password, codeRecord('totp', at)];
    case 'password+recovery_codes':
      return [password, codeRecord('recovery_codes', at)];
    default:
      return [password];
  }
}
