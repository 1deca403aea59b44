import type { AuthenticatorType } from '../mfa/model.js';
import type { SamlSubject } from '../socialaccount/model.js';

/**
 * How a login's person proved who they are: one first factor, whatever it is, then the proofs the
 * later stages asked for. Every way in hands its proven first factor to the same pipeline
 * (pipeline.ts), which runs the same stages for all of them, so that no door can skip one.
 */
export type FirstFactor =
  /** The password, typed on a login form, the headless API or POST /api/auth-token/. */
  | { kind: 'password' }
  /** The password, on the admin's own login form (Django's model backend). */
  | { kind: 'admin_password' }
  /**
   * An account at a provider (OAuth2, OpenID Connect, or a SAML IdP), linked to the user. A SAML
   * IdP's also says whom its assertion was for and in which of its sessions: the session this
   * login ends in keeps it, for the IdP's single logout to name (docs/saml.md).
   */
  | { kind: 'socialaccount'; provider: string; uid: string; samlSubject?: SamlSubject }
  /** A SAML assertion from an organisation's identity provider. */
  | { kind: 'saml'; organization: string; uid: string }
  /** A passkey: possession and user verification in one, so it is a second factor too. */
  | { kind: 'passkey'; authenticatorId: number }
  /** A one-time code mailed to the address. */
  | { kind: 'email_code'; email: string }
  /**
   * A passkey signup (MFA_PASSKEY_SIGNUP_ENABLED): a new account's address alone, with no password.
   * It proves nothing yet: the login waits for the address to be verified by a code, then at
   * mfa_signup_webauthn for the passkey, which signs the person in.
   */
  | { kind: 'passkey_signup' };

/**
 * What a later stage proved: a code from an authenticator, a browser trusted to skip that code, or
 * a code mailed to the address (the login_by_code stage, ACCOUNT_LOGIN_BY_CODE_REQUIRED).
 */
export type StageProof = { kind: AuthenticatorType } | { kind: 'trusted_browser' } | { kind: 'email_code'; email: string };

/** Everything a login proved, in the order it proved it: the first factor first. */
export type LoginProofs = readonly [FirstFactor, ...StageProof[]];

export const PASSWORD: FirstFactor = { kind: 'password' };

/** The audit trail's name for a login's proofs: 'password', 'password+totp', 'socialaccount+recovery_codes'. */
export function loginMethod(proofs: LoginProofs): string {
  return proofs.map((proof) => proof.kind).join('+');
}

/**
 * Whether the login gave a code from an authenticator (not just a trusted browser's cookie, and
 * not a mailed code: that proves the mailbox, not a second factor).
 */
export function gaveCode(proofs: LoginProofs): boolean {
  return proofs.slice(1).some((proof) => proof.kind !== 'trusted_browser' && proof.kind !== 'email_code');
}

/**
 * Whether the login has already proved a second factor: a passkey as its first factor, or a later
 * proof from an authenticator or a trusted browser. A mailed code is none of these: a login that
 * gave one (login_by_code) still owes its second factor.
 */
export function provedSecondFactor(proofs: LoginProofs): boolean {
  return proofs[0].kind === 'passkey' || proofs.slice(1).some((proof) => proof.kind !== 'email_code');
}
