import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import { commitChange, deliverMail } from '../../account/changes.js';
import type { MailOutcome } from '../../account/emails.js';
import { decryptSecret, encryptSecret } from '../../core/encryption.js';
import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { User } from '../../account/model.js';
import { claimTotpStep, normalizeCode, removeAuthenticator, sealedAuthenticatorData, totpParameters } from '../authenticators.js';
import { INCORRECT_CODE } from './authenticate.js';
import { qrCodeSvg } from '../qr-code.js';
import { newRecoverySeed } from '../recovery-codes.js';
import { matchTotpCode, newTotpSecret, totpSecretToBase32, totpUri } from '../totp.js';
import { EMAIL_UNVERIFIED, mfaNotice, requireSupportedType, type MfaChangeInput } from './manage.js';
import { msg } from '../../core/i18n/message.js';

export { EMAIL_UNVERIFIED };
export const TOTP_ALREADY_ACTIVE = msg('You already have an authenticator app set up.');
export const TOTP_NOT_ACTIVE = msg('You have no authenticator app set up.');

/** The setup screen of an authenticator app: what to scan or type, and the secret awaiting a code. */
export interface TotpSetup {
  /** The secret in base32, for typing in by hand. */
  secret: string;
  /** The otpauth:// URI the QR code carries. */
  totpUrl: string;
  qrSvg: string;
  /**
   * The secret, encrypted, for the adapter to keep until the code arrives (the pages keep it in
   * the session). It is sealed to this user, so it cannot be replayed for another account.
   */
  pending: string;
}

const PENDING_PURPOSE = 'mfa:pending-totp';
const pendingBinding = (user: User): string => `latchkey:pending-totp:user:${user.id}`;

async function requireVerifiedEmail(deps: LatchkeyDeps, user: User): Promise<void> {
  const addresses = await deps.store.emailAddresses.listForUser(user.id);
  if (!addresses.some((address) => address.verified)) throw new LatchkeyError('email_unverified', EMAIL_UNVERIFIED);
}

/**
 * The first step of activating an authenticator app: a new secret (or the one already awaiting a
 * code, so that a mistyped code does not change the QR code under the person's eyes). Only a user
 * with a verified address may: the address is how they would learn of the change, and how they
 * would get back in without the app.
 */
export async function totpSetup(deps: LatchkeyDeps, user: User, pending?: string): Promise<TotpSetup> {
  requireSupportedType(deps, 'totp');
  await requireVerifiedEmail(deps, user);
  if (await deps.store.authenticators.findForUser(user.id, 'totp')) throw new LatchkeyError('authenticator_exists', TOTP_ALREADY_ACTIVE);
  const secret = decryptSecret(deps.settings.SECRET_KEY, PENDING_PURPOSE, pending, pendingBinding(user)) ?? newTotpSecret();
  const totpUrl = totpUri({ secret, issuer: deps.settings.SITE_NAME, label: user.username ?? user.email, parameters: totpParameters(deps.settings) });
  return {
    secret: totpSecretToBase32(secret),
    totpUrl,
    qrSvg: await qrCodeSvg(totpUrl),
    pending: encryptSecret(deps.settings.SECRET_KEY, PENDING_PURPOSE, secret, pendingBinding(user)),
  };
}

export interface ActivateTotpInput extends MfaChangeInput {
  /** TotpSetup.pending, as the adapter kept it. */
  pending: string | undefined;
  code: string;
}

export interface ActivateTotpResult {
  /** True when this activation also created the recovery codes (the user's first authenticator). */
  recoveryCodesGenerated: boolean;
  notification: MailOutcome;
}

/**
 * Activates the app once it has shown it computes the same codes: the code must match the
 * pending secret. The app and, with the first authenticator, a set of recovery codes are created
 * in one transaction; the database's unique key lets only one of two parallel activations win.
 */
export async function activateTotp(deps: LatchkeyDeps, input: ActivateTotpInput): Promise<ActivateTotpResult> {
  const { user } = input;
  requireSupportedType(deps, 'totp');
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  await requireVerifiedEmail(deps, user);
  // Said first, so a second activation learns why (the unique index still decides a race).
  if (await deps.store.authenticators.findForUser(user.id, 'totp')) throw new LatchkeyError('authenticator_exists', TOTP_ALREADY_ACTIVE);
  const secret = decryptSecret(deps.settings.SECRET_KEY, PENDING_PURPOSE, input.pending, pendingBinding(user));
  // No pending secret (expired session, another account's, altered): the person starts again.
  if (!secret) throw new LatchkeyError('invalid_input', 'The setup has expired. Please scan the new code and try again.');
  const now = deps.clock.now();
  const step = matchTotpCode(secret, normalizeCode(input.code), now, totpParameters(deps.settings));
  if (step === undefined) throw new LatchkeyError('incorrect_code', INCORRECT_CODE, { param: 'code' });
  // The code that proves the app is used up like any other (seen over a shoulder, it cannot sign
  // in), before anything is written: a claim store that is down refuses the activation whole. A
  // code already claimed for this pending secret is a parallel activation's (the secret lives in
  // this person's session only), which has made, or is making, the app.
  if (!(await claimTotpStep(deps, user.id, secret, step, now))) throw new LatchkeyError('authenticator_exists', TOTP_ALREADY_ACTIVE);
  const withRecoveryCodes = deps.settings.MFA_SUPPORTED_TYPES.includes('recovery_codes');
  // The app, its recovery codes, their audit records and the notice: all of it, or none.
  const { recoveryCodesGenerated, notice } = await commitChange(deps, async (change) => {
    const { repositories } = change;
    await repositories.authenticators.create({ userId: user.id, type: 'totp', data: sealedAuthenticatorData(deps.settings, user.id, 'totp', secret), createdAt: now });
    await change.record('authenticator_added', user.id, input.client, { type: 'totp' });
    let recoveryCodesGenerated = false;
    if (withRecoveryCodes && !(await repositories.authenticators.findForUser(user.id, 'recovery_codes'))) {
      const seed = newRecoverySeed();
      await repositories.authenticators.create({ userId: user.id, type: 'recovery_codes', data: sealedAuthenticatorData(deps.settings, user.id, 'recovery_codes', seed), createdAt: now });
      await change.record('authenticator_added', user.id, input.client, { type: 'recovery_codes' });
      recoveryCodesGenerated = true;
    }
    return { recoveryCodesGenerated, notice: await change.queueMail(mfaNotice(deps, user, 'totp_activated', input.client)) };
  });
  return { recoveryCodesGenerated, notification: await deliverMail(deps, notice) };
}

/**
 * Removes the authenticator app, and with it the recovery codes when no other authenticator
 * remains (removeAuthenticator); both in one transaction. Needs a recent reauthentication, like
 * every change to how the account is protected.
 */
export async function deactivateTotp(deps: LatchkeyDeps, input: MfaChangeInput): Promise<{ notification: MailOutcome }> {
  const { user } = input;
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  const notice = await commitChange(deps, async (change) => {
    const totp = await change.repositories.authenticators.findForUser(user.id, 'totp');
    const removed = totp && (await removeAuthenticator(change.repositories, totp));
    if (!removed) throw new LatchkeyError('not_found', TOTP_NOT_ACTIVE);
    await change.record('authenticator_removed', user.id, input.client, { type: 'totp' });
    if (removed.codesRemoved) await change.record('authenticator_removed', user.id, input.client, { type: 'recovery_codes' });
    return change.queueMail(mfaNotice(deps, user, 'totp_deactivated', input.client));
  });
  return { notification: await deliverMail(deps, notice) };
}
