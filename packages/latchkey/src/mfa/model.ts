import type { AuthenticatorType } from '../config/choices.js';

export type { AuthenticatorType } from '../config/choices.js';

/**
 * A second factor of a user (allauth.mfa's Authenticator): at most one of each type per user,
 * except WebAuthn credentials (passkeys and security keys), of which a user may have several.
 * `data` is the type's own JSON state; its secrets are encrypted by the MFA domain (mfa/) before
 * they reach a repository, so the storage layer never holds one in clear.
 */
export interface Authenticator {
  id: number;
  userId: number;
  type: AuthenticatorType;
  data: Record<string, unknown>;
  /** A WebAuthn credential's id (base64url), by which a passkey login finds it; null for the other types. */
  credentialId: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface NewAuthenticator {
  userId: number;
  type: AuthenticatorType;
  data: Record<string, unknown>;
  credentialId?: string;
  createdAt: Date;
}
