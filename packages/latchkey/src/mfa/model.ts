import type { AuthenticatorType } from '../config/choices.js';

export type { AuthenticatorType } from '../config/choices.js';

/**
 * A second factor of a user (allauth.mfa's Authenticator): at most one of each type per user.
 * `data` is the type's own JSON state; its secrets are encrypted by the MFA domain (mfa/) before
 * they reach a repository, so the storage layer never holds one in clear.
 */
export interface Authenticator {
  id: number;
  userId: number;
  type: AuthenticatorType;
  data: Record<string, unknown>;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface NewAuthenticator {
  userId: number;
  type: AuthenticatorType;
  data: Record<string, unknown>;
  createdAt: Date;
}
