import type { User } from '../account/model.js';
import type { LatchkeyDeps } from '../deps.js';
import { hasMfaEnabled } from '../mfa/authenticators.js';
import type { AuthenticatorType } from '../mfa/model.js';

/** One of a user's second factors, without its secret data. */
export interface AuthenticatorSummary {
  id: number;
  /** 'totp', 'recovery_codes' or 'webauthn' (a passkey or security key). */
  type: AuthenticatorType;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/**
 * The project's view of the second factors (allauth.mfa's Authenticator), read only: adding and
 * removing one goes through the MFA pages, which check the rules, send the notices and record
 * the events.
 */
export interface LatchkeyAuthenticators {
  listForUser(user: Pick<User, 'id'>): Promise<AuthenticatorSummary[]>;
  /** Whether the user is asked for a second factor at login (an authenticator app or a passkey). */
  hasSecondFactor(user: Pick<User, 'id'>): Promise<boolean>;
}

export function authenticatorsOf(deps: LatchkeyDeps): LatchkeyAuthenticators {
  return {
    async listForUser(user) {
      return (await deps.store.authenticators.listForUser(user.id)).map(({ id, type, createdAt, lastUsedAt }) => ({ id, type, createdAt, lastUsedAt }));
    },
    hasSecondFactor: (user) => hasMfaEnabled(deps, user.id),
  };
}
