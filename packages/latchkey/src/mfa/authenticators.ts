import { keyedHash } from '../core/crypto.js';
import { decryptSecret, encryptSecret } from '../core/encryption.js';
import type { LatchkeyDeps } from '../deps.js';
import type { Repositories } from '../store.js';
import type { Authenticator, AuthenticatorType } from './model.js';
import type { User } from '../account/model.js';
import { matchRecoveryCode, recoveryCodes } from './recovery-codes.js';
import { matchTotpCode, type TotpParameters } from './totp.js';

/**
 * The user's second factors as the domain sees them: secrets decrypted only here, codes checked
 * only here. An authenticator's secret is encrypted under a key derived from LATCHKEY_SECRET_KEY
 * and bound to its user and type (core/encryption.ts), so neither a database dump nor a row copied
 * onto another account yields a usable secret.
 */
export type MfaDeps = Pick<LatchkeyDeps, 'settings' | 'store' | 'clock' | 'oneTimeClaims'>;

export function totpParameters(settings: LatchkeyDeps['settings']): TotpParameters {
  return { period: settings.MFA_TOTP_PERIOD, digits: settings.MFA_TOTP_DIGITS, tolerance: settings.MFA_TOTP_TOLERANCE };
}

function boundTo(userId: number, type: AuthenticatorType): string {
  return `latchkey:authenticator:user:${userId}:${type}`;
}

/** The JSON data of a new authenticator of `type` holding `secret` (the TOTP secret or the recovery seed). */
export function sealedAuthenticatorData(settings: LatchkeyDeps['settings'], userId: number, type: AuthenticatorType, secret: Uint8Array): Record<string, unknown> {
  return { secret: encryptSecret(settings.SECRET_KEY, `mfa:${type}`, secret, boundTo(userId, type)) };
}

/** The authenticator's secret, or undefined when it cannot be decrypted (the secret key was changed, or the row altered). */
export function authenticatorSecret(settings: LatchkeyDeps['settings'], authenticator: Authenticator): Uint8Array | undefined {
  return decryptSecret(settings.SECRET_KEY, `mfa:${authenticator.type}`, authenticator.data.secret, boundTo(authenticator.userId, authenticator.type));
}

/**
 * The user's authenticators of the types the project supports (MFA_SUPPORTED_TYPES), for what the
 * user is offered to see and manage. Logins and code checks use every authenticator the user has:
 * taking a type out of MFA_SUPPORTED_TYPES stops new setups, never a second factor already in use.
 */
export async function supportedAuthenticators(deps: Pick<MfaDeps, 'settings' | 'store'>, userId: number): Promise<Authenticator[]> {
  const supported = new Set<AuthenticatorType>(deps.settings.MFA_SUPPORTED_TYPES);
  return (await deps.store.authenticators.listForUser(userId)).filter((authenticator) => supported.has(authenticator.type));
}

/** Whether the user must give a code to log in (and may reauthenticate with one). */
export async function hasMfaEnabled(deps: Pick<MfaDeps, 'store'>, userId: number): Promise<boolean> {
  return hasSecondFactor(await deps.store.authenticators.listForUser(userId));
}

/**
 * Whether a login of this user needs a second factor: when they have an authenticator app.
 * Recovery codes alone never exist (they go with the last authenticator) and are no factor of
 * their own; they stand in for the app when it is lost.
 */
export function hasSecondFactor(authenticators: readonly Authenticator[]): boolean {
  return authenticators.some((authenticator) => authenticator.type !== 'recovery_codes');
}

/**
 * What removing an authenticator takes with it, of the user's authenticators: recovery codes
 * stand in for a lost second factor and are no factor of their own, so they go too when no other
 * authenticator remains.
 */
export function removedWith(authenticator: Pick<Authenticator, 'id' | 'type'>, all: readonly Authenticator[]): Authenticator[] {
  if (authenticator.type === 'recovery_codes') return [];
  const remaining = all.filter((other) => other.id !== authenticator.id);
  return hasSecondFactor(remaining) ? [] : remaining.filter((other) => other.type === 'recovery_codes');
}

/**
 * Removes one of the user's authenticators and what goes with it (removedWith). Give it the
 * repositories of a transaction, so that they go together. Undefined when the authenticator was
 * gone already; otherwise whether the recovery codes went with it.
 */
export async function removeAuthenticator(repositories: Pick<Repositories, 'authenticators'>, authenticator: Authenticator): Promise<{ codesRemoved: boolean } | undefined> {
  if (!(await repositories.authenticators.delete(authenticator.id))) return undefined;
  const alongside = removedWith(authenticator, await repositories.authenticators.listForUser(authenticator.userId));
  for (const other of alongside) await repositories.authenticators.delete(other.id);
  return { codesRemoved: alongside.length > 0 };
}

/** The unused recovery codes of the set, in order. */
export async function unusedRecoveryCodes(deps: Pick<MfaDeps, 'settings' | 'store'>, authenticator: Authenticator): Promise<string[]> {
  const seed = authenticatorSecret(deps.settings, authenticator);
  if (!seed) return [];
  const used = new Set(await deps.store.authenticators.usedRecoveryCodes(authenticator.id));
  const { MFA_RECOVERY_CODE_COUNT: count, MFA_RECOVERY_CODE_DIGITS: digits } = deps.settings;
  return recoveryCodes(seed, count, digits).filter((_, index) => !used.has(index));
}

/** What people type: spaces and dashes (as in "123 456" or "1234-5678") are not part of a code. */
export function normalizeCode(code: string): string {
  return code.length > 64 ? '' : code.replace(/[\s-]/g, '');
}

/**
 * Checks a code against the user's authenticators and, when it is right, uses it up: a TOTP code
 * is claimed for its time step (in the database, or Redis when REDIS_URL is set), so it is refused
 * for the rest of its life, by every instance, even when the same code arrives twice at once
 * (RFC 6238 section 5.2); a recovery code is marked used in the database, where a unique key lets
 * exactly one of two parallel uses succeed, durably. Returns the type of the authenticator that
 * accepted it, or undefined for a wrong, expired or already used code.
 */
export async function useCode(deps: MfaDeps, user: User, typed: string): Promise<AuthenticatorType | undefined> {
  const code = normalizeCode(typed);
  const now = deps.clock.now();
  const authenticators = await deps.store.authenticators.listForUser(user.id);
  for (const authenticator of authenticators) {
    const accepted = authenticator.type === 'totp' ? await useTotpCode(deps, authenticator, code, now) : await useRecoveryCode(deps, authenticator, code, now);
    if (accepted) {
      await deps.store.authenticators.markUsed(authenticator.id, now);
      return authenticator.type;
    }
  }
  return undefined;
}

async function useTotpCode(deps: MfaDeps, authenticator: Authenticator, code: string, now: Date): Promise<boolean> {
  const secret = authenticatorSecret(deps.settings, authenticator);
  if (!secret) return false;
  const parameters = totpParameters(deps.settings);
  const step = matchTotpCode(secret, code, now, parameters);
  if (step === undefined) return false;
  return claimTotpStep(deps, authenticator.userId, secret, step, now);
}

/**
 * Uses up the code of one time step: true for the first claim, false for every later one. The
 * claim outlives every moment at which the step's code could still be accepted (its own step and
 * `tolerance` steps after it), with one step to spare for instances whose clocks differ. It is
 * keyed by the user and the secret (a keyed hash of it, so the claim store never holds anything
 * that computes a code), not by the authenticator's id: so activation claims its proving code
 * before the authenticator exists, and a claim store that is down stops it before anything is
 * written.
 */
export function claimTotpStep(deps: Pick<MfaDeps, 'settings' | 'oneTimeClaims'>, userId: number, secret: Uint8Array, step: number, now: Date): Promise<boolean> {
  const parameters = totpParameters(deps.settings);
  const lifetime = parameters.period * (2 * parameters.tolerance + 2);
  const secretTag = keyedHash(deps.settings.SECRET_KEY, 'mfa:totp-claim', Buffer.from(secret).toString('base64')).slice(0, 22);
  return deps.oneTimeClaims.claim(`mfa:totp:${userId}:${secretTag}:${step}`, lifetime, now);
}

async function useRecoveryCode(deps: MfaDeps, authenticator: Authenticator, code: string, now: Date): Promise<boolean> {
  const seed = authenticatorSecret(deps.settings, authenticator);
  if (!seed) return false;
  const index = matchRecoveryCode(seed, code, deps.settings.MFA_RECOVERY_CODE_COUNT, deps.settings.MFA_RECOVERY_CODE_DIGITS);
  if (index === undefined) return false;
  return deps.store.authenticators.useRecoveryCode(authenticator.id, index, now);
}
