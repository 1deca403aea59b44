import { keyedHash } from '../core/crypto.js';
import { decryptSecret, encryptSecret } from '../core/encryption.js';
import type { LatchkeyDeps } from '../deps.js';
import type { Repositories } from '../store.js';
import type { Authenticator, AuthenticatorType } from './model.js';
import type { User } from '../account/model.js';
import { ALLAUTH_RECOVERY_CODE_COUNT, allauthRecoveryCodes, allauthUsedIndices, isAllauthSeed } from './allauth-recovery-codes.js';
import { matchCodeAmong, recoveryCodes } from './recovery-codes.js';
import { matchTotpCode, totpSecretFromBase32, type TotpParameters } from './totp.js';

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

/** What sealing a secret needs of the settings (an importer has no more than that). */
type SecretKeySetting = Pick<LatchkeyDeps['settings'], 'SECRET_KEY'>;

function boundTo(userId: number, type: AuthenticatorType): string {
  return `latchkey:authenticator:user:${userId}:${type}`;
}

/** The JSON data of a new authenticator of `type` holding `secret` (the TOTP secret or the recovery seed). */
export function sealedAuthenticatorData(settings: SecretKeySetting, userId: number, type: AuthenticatorType, secret: Uint8Array): Record<string, unknown> {
  return { secret: encryptSecret(settings.SECRET_KEY, `mfa:${type}`, secret, boundTo(userId, type)) };
}

/**
 * The authenticator's secret, or undefined when it cannot be decrypted (the secret key was changed,
 * or the row altered). For an imported set of recovery codes, the secret of its scheme (below).
 */
export function authenticatorSecret(settings: LatchkeyDeps['settings'], authenticator: Authenticator): Uint8Array | undefined {
  const scheme = authenticator.type === 'recovery_codes' ? recoveryCodeScheme(authenticator) : LATCHKEY_SCHEME;
  if (scheme === undefined) return undefined;
  return decryptSecret(settings.SECRET_KEY, `mfa:${authenticator.type}`, authenticator.data.secret, schemeBinding(authenticator.userId, authenticator.type, scheme));
}

/**
 * How a set of recovery codes is made. Latchkey's own sets ('latchkey': data `{ secret }`, the
 * sealed seed of recovery-codes.ts) carry no marker, as they always have. Sets imported from
 * django-allauth say which of its two kinds they are: 'allauth' (the sealed ASCII text of allauth's
 * seed; the codes of allauth-recovery-codes.ts) or 'listed' (the sealed JSON list of the codes
 * themselves, which allauth keeps for codes migrated from another two-factor package).
 */
export type RecoveryCodeScheme = 'latchkey' | 'allauth' | 'listed';
const LATCHKEY_SCHEME = 'latchkey';

function recoveryCodeScheme(authenticator: Authenticator): RecoveryCodeScheme | undefined {
  const { scheme } = authenticator.data;
  if (scheme === undefined) return LATCHKEY_SCHEME;
  return scheme === 'allauth' || scheme === 'listed' ? scheme : undefined;
}

/**
 * The associated data a secret is sealed with: the imported schemes add their name to the row's
 * binding, so that the secret decrypts only under the scheme it was sealed for. Someone able to
 * write to the database cannot change a row's marker and have its secret read the other way (a
 * Latchkey seed taken for allauth's, a code list for a seed): the secret then fails to decrypt
 * and the set matches nothing.
 */
function schemeBinding(userId: number, type: AuthenticatorType, scheme: RecoveryCodeScheme): string {
  return scheme === LATCHKEY_SCHEME ? boundTo(userId, type) : `${boundTo(userId, type)}:${scheme}`;
}

/** A recovery-code set as django-allauth's mfa app stores it, its data already decrypted by the project's hook. */
export type ImportedRecoveryCodes = { seed: string; usedMask: number } | { codes: readonly string[] };

export interface ImportedRecoveryCodesData {
  /** The JSON data of the new `recovery_codes` authenticator. */
  data: Record<string, unknown>;
  /** The numbers of the codes to record as used (AuthenticatorRepository.useRecoveryCode), ascending. */
  usedIndices: number[];
}

/**
 * The authenticator data for a set of recovery codes imported from django-allauth, sealed to the
 * user like every authenticator secret, so the database never holds the seed or a code in clear;
 * and which of its codes to record as used. `{ seed, usedMask }` is allauth's own set (data
 * `seed` and `used_mask`); `{ codes }` is a set of codes migrated into allauth from another package
 * (data `migrated_codes`), every one of them unused, as allauth removes a code from the list when
 * it is used. Undefined when the set cannot be one allauth made: a seed that is not printable
 * ASCII, a mask that is not a whole number from 0, a listed code empty or longer than a code can be
 * typed (normalizeCode). An empty list is accepted: the user had used every code.
 *
 * Regenerating the codes replaces the set with a Latchkey set, scheme and all.
 */
export function importedRecoveryCodesData(settings: SecretKeySetting, userId: number, imported: ImportedRecoveryCodes): ImportedRecoveryCodesData | undefined {
  if ('seed' in imported) {
    if (!isAllauthSeed(imported.seed) || !Number.isSafeInteger(imported.usedMask) || imported.usedMask < 0) return undefined;
    return { data: sealedRecoveryCodes(settings, userId, 'allauth', Buffer.from(imported.seed, 'ascii')), usedIndices: allauthUsedIndices(imported.usedMask) };
  }
  if (!Array.isArray(imported.codes) || !imported.codes.every((code) => typeof code === 'string' && normalizeCode(code) !== '')) return undefined;
  return { data: sealedRecoveryCodes(settings, userId, 'listed', Buffer.from(JSON.stringify(imported.codes), 'utf8')), usedIndices: [] };
}

function sealedRecoveryCodes(settings: SecretKeySetting, userId: number, scheme: 'allauth' | 'listed', secret: Uint8Array): Record<string, unknown> {
  return { scheme, secret: encryptSecret(settings.SECRET_KEY, 'mfa:recovery_codes', secret, schemeBinding(userId, 'recovery_codes', scheme)) };
}

/**
 * The authenticator data for a TOTP secret imported from django-allauth, which stores it as base32
 * text (data `secret`, already decrypted by the project's hook): the same sealed raw bytes an
 * activation here stores, so the user's app goes on working. Undefined when the text is empty or
 * not base32.
 */
export function importedTotpData(settings: SecretKeySetting, userId: number, base32Secret: string): Record<string, unknown> | undefined {
  const secret = totpSecretFromBase32(base32Secret);
  return secret === undefined ? undefined : sealedAuthenticatorData(settings, userId, 'totp', secret);
}

/**
 * Every code of a set of recovery codes, used or not, in the order of their numbers; undefined
 * when its secret cannot be decrypted. A Latchkey set follows MFA_RECOVERY_CODE_COUNT and
 * MFA_RECOVERY_CODE_DIGITS; an imported set has the codes it came with (allauth's: ten of 8 digits).
 */
export function recoveryCodeSet(settings: LatchkeyDeps['settings'], authenticator: Authenticator): string[] | undefined {
  const scheme = authenticator.type === 'recovery_codes' ? recoveryCodeScheme(authenticator) : undefined;
  const secret = scheme && authenticatorSecret(settings, authenticator);
  if (scheme === undefined || secret === undefined) return undefined;
  switch (scheme) {
    case 'latchkey':
      return recoveryCodes(secret, settings.MFA_RECOVERY_CODE_COUNT, settings.MFA_RECOVERY_CODE_DIGITS);
    case 'allauth':
      return allauthRecoveryCodes(secret);
    case 'listed':
      return listedCodes(secret);
  }
}

function listedCodes(secret: Uint8Array): string[] | undefined {
  try {
    const codes: unknown = JSON.parse(Buffer.from(secret).toString('utf8'));
    return Array.isArray(codes) && codes.every((code): code is string => typeof code === 'string') ? codes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How many codes the set has, used or not, for "n of m unused". A Latchkey set has
 * MFA_RECOVERY_CODE_COUNT even when its seed cannot be decrypted (none of them is then unused).
 */
export function recoveryCodeTotal(settings: LatchkeyDeps['settings'], authenticator: Authenticator): number {
  switch (recoveryCodeScheme(authenticator)) {
    case 'latchkey':
      return settings.MFA_RECOVERY_CODE_COUNT;
    case 'allauth':
      return ALLAUTH_RECOVERY_CODE_COUNT;
    default:
      return recoveryCodeSet(settings, authenticator)?.length ?? 0;
  }
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
  const codes = recoveryCodeSet(deps.settings, authenticator);
  if (!codes) return [];
  const used = new Set(await deps.store.authenticators.usedRecoveryCodes(authenticator.id));
  return codes.filter((_, index) => !used.has(index));
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

/**
 * Uses up a recovery code: the first unused code of the set that `code` is. Codes are compared as
 * typed codes are normalized (an imported code may have been listed with spaces or dashes).
 */
async function useRecoveryCode(deps: MfaDeps, authenticator: Authenticator, code: string, now: Date): Promise<boolean> {
  const codes = recoveryCodeSet(deps.settings, authenticator);
  if (!codes) return false;
  const used = new Set(await deps.store.authenticators.usedRecoveryCodes(authenticator.id));
  const index = matchCodeAmong(codes.map(normalizeCode), code, used);
  if (index === undefined) return false;
  return deps.store.authenticators.useRecoveryCode(authenticator.id, index, now);
}
