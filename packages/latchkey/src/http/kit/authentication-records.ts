import type { FirstFactor, LoginProofs } from '../../login/proofs.js';
import type { Settings } from '../../config/settings.js';
import type { AuthenticatorType } from '../../mfa/model.js';
import type { User } from '../../account/model.js';
import type { SamlSubject } from '../../socialaccount/model.js';

/**
 * How a user proved who they are in a session, one record per proof, as the headless API lists
 * them (`methods`): the password at login, a code at the second step, a reauthentication later.
 * `at` is seconds since the epoch, as allauth gives it.
 */
export type AuthenticationRecord =
  | { method: 'password'; at: number; username?: string; email?: string }
  | { method: 'mfa'; at: number; type: AuthenticatorType; reauthenticated?: true }
  | { method: 'mfa'; at: number; type: 'webauthn'; passwordless: true }
  | { method: 'socialaccount'; at: number; provider: string; uid: string; reauthenticated: boolean }
  | { method: 'code'; at: number; email: string };

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

/** A first factor as allauth.headless records it (SAML is one of allauth's social providers). */
function firstFactorRecord(settings: Pick<Settings, 'USERNAME_TYPE'>, user: User, factor: FirstFactor, at: Date): AuthenticationRecord {
  switch (factor.kind) {
    case 'password':
    case 'admin_password':
      return passwordRecord(settings, user, at);
    // The published schema requires `reauthenticated` on a provider's record.
    case 'socialaccount':
      return { method: 'socialaccount', at: seconds(at), provider: factor.provider, uid: factor.uid, reauthenticated: false };
    case 'saml':
      return { method: 'socialaccount', at: seconds(at), provider: factor.organization, uid: factor.uid, reauthenticated: false };
    // A passkey signup ends when its new passkey is made, with the person verified: the session
    // holds it as a sign-in with that passkey.
    case 'passkey':
    case 'passkey_signup':
      return { method: 'mfa', at: seconds(at), type: 'webauthn', passwordless: true };
    case 'email_code':
      return { method: 'code', at: seconds(at), email: factor.email };
  }
}

/**
 * What a completed login proved, in the order it proved it. A trusted browser is not a proof the
 * contract has a record for: the session lists the first factor alone, as allauth's does.
 */
export function loginRecords(settings: Pick<Settings, 'USERNAME_TYPE'>, user: User, proofs: LoginProofs, at: Date): AuthenticationRecord[] {
  const [first, ...later] = proofs;
  const codes = later.flatMap((proof): AuthenticationRecord[] => {
    if (proof.kind === 'trusted_browser') return [];
    // The code ACCOUNT_LOGIN_BY_CODE_REQUIRED asked for after the first factor: allauth records it as a code login.
    if (proof.kind === 'email_code') return [{ method: 'code', at: seconds(at), email: proof.email }];
    return [codeRecord(proof.kind, at)];
  });
  return [firstFactorRecord(settings, user, first, at), ...codes];
}

/** The SAML sign-in a session's login came through: the IdP (its provider id), and whom and which IdP session the assertion was for. */
export interface SamlSignIn {
  provider: string;
  subject: SamlSubject;
}

/** The SAML sign-in a completed login's first factor came through; undefined for any other first factor. */
export function samlSignInOf(proofs: LoginProofs): SamlSignIn | undefined {
  const [first] = proofs;
  return first.kind === 'socialaccount' && first.samlSubject !== undefined ? { provider: first.provider, subject: first.samlSubject } : undefined;
}
