import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import { commitChange, deliverMail } from '../../account/changes.js';
import type { MailOutcome } from '../../account/emails.js';
import type { User } from '../../account/model.js';
import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { Repositories } from '../../store.js';
import { removeAuthenticator, sealedAuthenticatorData } from '../authenticators.js';
import type { Authenticator } from '../model.js';
import { newRecoverySeed } from '../recovery-codes.js';
import {
  authenticationOptions,
  claimCeremony,
  INVALID_CREDENTIAL,
  registrationOptions,
  verifyAssertion,
  verifyRegistration,
  webauthnKeys,
  type CeremonyPurpose,
  type WebauthnCeremony,
  type WebauthnKey,
} from '../webauthn.js';
import { EMAIL_UNVERIFIED, mfaNotice, requireSupportedType, type MfaChangeInput } from './manage.js';
import { msg, nmsg } from '../../core/i18n/message.js';

/**
 * Passkeys and security keys: adding, naming and removing them, and proving one, for a second
 * factor, a reauthentication or a passkey login. The pages and the headless API both call these
 * and keep the ceremony (mfa/webauthn.ts) in the client's session between the options and the
 * answer.
 */

export const KEY_NOT_FOUND = msg('No such security key.');
const NAME_MAX_LENGTH = 64;

export interface CeremonyOptions<T> {
  options: T;
  /** For the adapter to keep in the client's session until the answer comes. */
  ceremony: WebauthnCeremony;
}

async function userKeys(deps: Pick<LatchkeyDeps, 'store'>, userId: number): Promise<WebauthnKey[]> {
  return webauthnKeys(await deps.store.authenticators.listForUser(userId));
}

/** A key's name as the person typed it: trimmed, not empty, not too long. */
export function cleanKeyName(name: string | undefined, fallback: string): string {
  const clean = (name ?? '').trim();
  if (clean === '') return fallback;
  if (clean.length > NAME_MAX_LENGTH) {
    throw new LatchkeyError('invalid_input', nmsg('Ensure this value has at most {max} character.', 'Ensure this value has at most {max} characters.', NAME_MAX_LENGTH, { max: NAME_MAX_LENGTH }), { param: 'name' });
  }
  return clean;
}

/**
 * The options for a new key, the first step of adding one, so under the same rules as the last:
 * as for an authenticator app, only a user with a verified address may add one (the address is
 * how they would hear of the change and get back in without it), and only after a recent proof of
 * identity (allauth's begin_registration; checked after the address, in allauth's order).
 */
export async function webauthnRegistrationOptions(
  deps: LatchkeyDeps,
  input: { user: User; lastAuthenticatedAt: Date | undefined; passwordless: boolean },
): Promise<CeremonyOptions<PublicKeyCredentialCreationOptionsJSON>> {
  const { user } = input;
  requireSupportedType(deps, 'webauthn');
  await requireVerifiedAddress(deps, user);
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  return registrationOptions(deps, user, await userKeys(deps, user.id), input.passwordless);
}

/**
 * The options for the passkey a passkey signup makes: no reauthentication (the login is still
 * going on, and the passkey is to be its only way in), but a verified address all the same.
 */
export async function signupPasskeyOptions(deps: LatchkeyDeps, user: User): Promise<CeremonyOptions<PublicKeyCredentialCreationOptionsJSON>> {
  requireSupportedType(deps, 'webauthn');
  await requireVerifiedAddress(deps, user);
  return registrationOptions(deps, user, await userKeys(deps, user.id), true);
}

async function requireVerifiedAddress(deps: Pick<LatchkeyDeps, 'store'>, user: User): Promise<void> {
  const addresses = await deps.store.emailAddresses.listForUser(user.id);
  if (!addresses.some((address) => address.verified)) throw new LatchkeyError('email_unverified', EMAIL_UNVERIFIED);
}

export interface AddWebauthnKeyInput extends MfaChangeInput {
  ceremony: WebauthnCeremony | undefined;
  credential: RegistrationResponseJSON;
  name?: string | undefined;
}

export interface AddWebauthnKeyResult {
  authenticator: Authenticator;
  /** True when this key also created the recovery codes (the user's first second factor). */
  recoveryCodesGenerated: boolean;
  notification: MailOutcome;
}

/**
 * Adds a key once the browser has made it: needs a verified address still (as for the options),
 * a recent reauthentication (a stolen session must not add the thief's key), the ceremony this
 * session began for this user, and a valid registration. The key and, with the first second factor, recovery codes are made in one
 * transaction.
 */
export async function addWebauthnKey(deps: LatchkeyDeps, input: AddWebauthnKeyInput): Promise<AddWebauthnKeyResult> {
  const { user } = input;
  requireSupportedType(deps, 'webauthn');
  await requireVerifiedAddress(deps, user);
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  const name = cleanKeyName(input.name, 'Security key');
  const claimed = await claimCeremony(deps, input.ceremony, 'register');
  if (claimed.userId !== user.id) throw new LatchkeyError('incorrect_code', INVALID_CREDENTIAL, { param: 'credential' });
  const registration = await verifyRegistration(deps, claimed, input.credential, name);
  // The key, its recovery codes, their audit records and the notice: all of it, or none.
  const { authenticator, recoveryCodesGenerated, notice } = await commitChange(deps, async (change) => {
    const stored = await storeKey(deps, change.repositories, user, registration);
    await change.record('authenticator_added', user.id, input.client, { type: 'webauthn', passwordless: stored.authenticator.data.passwordless === true });
    if (stored.recoveryCodesGenerated) await change.record('authenticator_added', user.id, input.client, { type: 'recovery_codes' });
    return { ...stored, notice: await change.queueMail(mfaNotice(deps, user, 'webauthn_added', input.client, { name })) };
  });
  return { authenticator, recoveryCodesGenerated, notification: await deliverMail(deps, notice) };
}

/**
 * Stores a verified key and, where the project offers them and the user has none, recovery codes
 * (unless `recoveryCodes` is false: a passkey signup makes none, as allauth's).
 */
export async function storeKey(
  deps: Pick<LatchkeyDeps, 'settings' | 'clock'>,
  repositories: Repositories,
  user: User,
  registration: { credentialId: string; data: Record<string, unknown> },
  options: { recoveryCodes?: boolean } = {},
): Promise<{ authenticator: Authenticator; recoveryCodesGenerated: boolean }> {
  const now = deps.clock.now();
  const authenticator = await repositories.authenticators.create({ userId: user.id, type: 'webauthn', data: registration.data, credentialId: registration.credentialId, createdAt: now });
  if (options.recoveryCodes === false || !deps.settings.MFA_SUPPORTED_TYPES.includes('recovery_codes') || (await repositories.authenticators.findForUser(user.id, 'recovery_codes'))) {
    return { authenticator, recoveryCodesGenerated: false };
  }
  const seed = newRecoverySeed();
  await repositories.authenticators.create({ userId: user.id, type: 'recovery_codes', data: sealedAuthenticatorData(deps.settings, user.id, 'recovery_codes', seed), createdAt: now });
  return { authenticator, recoveryCodesGenerated: true };
}

/** A passkey signup's answer: the new passkey the browser made, with the ceremony the client's session kept. */
export interface SignupPasskeyAnswer {
  ceremony: WebauthnCeremony | undefined;
  credential: RegistrationResponseJSON;
  name?: string | undefined;
}

/**
 * The passkey that ends a passkey signup (the mfa_signup_webauthn stage): made for this new user
 * in a ceremony this client began for a passkey (discoverable, the person verified), since it is
 * the account's only way in. No reauthentication (the login is still going on), no notice by mail
 * and no recovery codes, as allauth's signup_authenticator: the person has just made the account.
 */
export async function addSignupPasskey(deps: LatchkeyDeps, user: User, answer: SignupPasskeyAnswer, client: ClientInfo): Promise<Authenticator> {
  requireSupportedType(deps, 'webauthn');
  const name = cleanKeyName(answer.name, 'Passkey');
  const claimed = await claimCeremony(deps, answer.ceremony, 'register');
  if (claimed.userId !== user.id || claimed.passwordless !== true) throw new LatchkeyError('incorrect_code', INVALID_CREDENTIAL, { param: 'credential' });
  const registration = await verifyRegistration(deps, claimed, answer.credential, name);
  return commitChange(deps, async (change) => {
    const { authenticator } = await storeKey(deps, change.repositories, user, registration, { recoveryCodes: false });
    await change.record('authenticator_added', user.id, client, { type: 'webauthn', passwordless: true });
    return authenticator;
  });
}

/** The user's keys, oldest first. */
export async function listWebauthnKeys(deps: Pick<LatchkeyDeps, 'store'>, user: User): Promise<WebauthnKey[]> {
  return userKeys(deps, user.id);
}

async function ownKey(deps: Pick<LatchkeyDeps, 'store'>, user: User, id: number): Promise<WebauthnKey> {
  const authenticator = await deps.store.authenticators.findById(id);
  // Another user's key reads as no key at all.
  const key = authenticator && authenticator.userId === user.id ? webauthnKeys([authenticator])[0] : undefined;
  if (!key) throw new LatchkeyError('not_found', KEY_NOT_FOUND);
  return key;
}

/**
 * Renames one of the user's keys, after a recent proof of identity (allauth's
 * rename_authenticator asks for one too: a name is what the person trusts when removing a key).
 */
export async function renameWebauthnKey(
  deps: LatchkeyDeps,
  input: { user: User; lastAuthenticatedAt: Date | undefined; id: number; name: string },
): Promise<WebauthnKey> {
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  const key = await ownKey(deps, input.user, input.id);
  const name = cleanKeyName(input.name, key.name);
  const data = { ...key.authenticator.data, name };
  if (!(await deps.store.authenticators.updateData(key.authenticator.id, data))) throw new LatchkeyError('not_found', KEY_NOT_FOUND);
  return { ...key, name, authenticator: { ...key.authenticator, data } };
}

/**
 * Removes keys of the user, with the recovery codes when no other second factor remains, in one
 * transaction: all of them or, when one is not theirs, none.
 */
export async function removeWebauthnKeys(deps: LatchkeyDeps, input: MfaChangeInput & { ids: readonly number[] }): Promise<{ notification: MailOutcome }> {
  const { user } = input;
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  if (input.ids.length === 0) throw new LatchkeyError('invalid_input', 'Choose a security key to remove.', { param: 'authenticators' });
  const keys = await Promise.all([...new Set(input.ids)].map((id) => ownKey(deps, user, id)));
  const notice = await commitChange(deps, async (change) => {
    let codesRemoved = false;
    for (const key of keys) {
      const removed = await removeAuthenticator(change.repositories, key.authenticator);
      if (!removed) throw new LatchkeyError('not_found', KEY_NOT_FOUND);
      codesRemoved ||= removed.codesRemoved;
    }
    for (const key of keys) await change.record('authenticator_removed', user.id, input.client, { type: 'webauthn', name: key.name });
    if (codesRemoved) await change.record('authenticator_removed', user.id, input.client, { type: 'recovery_codes' });
    return change.queueMail(mfaNotice(deps, user, 'webauthn_removed', input.client, { names: keys.map((key) => key.name) }));
  });
  return { notification: await deliverMail(deps, notice) };
}

/**
 * The options for proving a key: for a second factor or a reauthentication, the user's keys
 * (none: 'not_found'); for a passkey login, where nobody is known yet, any passkey for the site.
 */
export async function webauthnAuthenticationOptions(
  deps: LatchkeyDeps,
  purpose: Exclude<CeremonyPurpose, 'register'>,
  user?: User,
): Promise<CeremonyOptions<PublicKeyCredentialRequestOptionsJSON>> {
  if (purpose === 'login') {
    if (!deps.settings.MFA_PASSKEY_LOGIN_ENABLED) throw new LatchkeyError('not_found', 'Passkey login is not available.');
    return authenticationOptions(deps, 'login');
  }
  if (!user) throw new LatchkeyError('not_found', KEY_NOT_FOUND);
  const keys = await userKeys(deps, user.id);
  if (keys.length === 0) throw new LatchkeyError('not_found', KEY_NOT_FOUND);
  return authenticationOptions(deps, purpose, { id: user.id, keys });
}

/**
 * Proves a key for a ceremony this session began: the challenge is used up, the assertion
 * checked, and the key's counter and last use recorded. A counter that went back (a cloned key)
 * is refused and recorded in the audit trail.
 */
export async function proveWebauthnKey(
  deps: LatchkeyDeps,
  input: { ceremony: WebauthnCeremony | undefined; credential: AuthenticationResponseJSON; purpose: Exclude<CeremonyPurpose, 'register'>; user?: User; client: ClientInfo },
): Promise<WebauthnKey> {
  const failed = async (reason: string, userId = input.user?.id): Promise<LatchkeyError> => {
    // A passkey login names nobody until its key is found: such a failure is recorded against no one.
    if (userId !== undefined) await deps.events.emit('authentication_failed', userId, input.client, { method: 'webauthn', purpose: input.purpose, reason });
    return new LatchkeyError('incorrect_code', INVALID_CREDENTIAL, { param: 'credential' });
  };
  let outcome;
  try {
    const claimed = await claimCeremony(deps, input.ceremony, input.purpose);
    if (input.user && claimed.userId !== input.user.id) throw await failed('ceremony');
    outcome = await verifyAssertion(deps, claimed, input.credential);
  } catch (error) {
    if (isLatchkeyError(error, 'incorrect_code')) throw await failed('assertion');
    throw error;
  }
  if ('refused' in outcome) throw await failed('sign_count', outcome.key.authenticator.userId);
  const { key, newCounter } = outcome;
  const now = deps.clock.now();
  await deps.store.authenticators.updateData(key.authenticator.id, { ...key.authenticator.data, sign_count: newCounter });
  await deps.store.authenticators.markUsed(key.authenticator.id, now);
  await deps.events.emit('authenticator_used', key.authenticator.userId, input.client, { type: 'webauthn', purpose: input.purpose });
  return key;
}

/** True when the user has a passkey (a key that can sign in alone). */
export function hasPasskey(keys: readonly WebauthnKey[]): boolean {
  return keys.some((key) => key.passwordless);
}
