import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import { commitChange, deliverMail } from '../../account/changes.js';
import type { MailOutcome } from '../../account/emails.js';
import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import { hasSecondFactor, recoveryCodeTotal, sealedAuthenticatorData, unusedRecoveryCodes } from '../authenticators.js';
import { newRecoverySeed, recoveryCodes } from '../recovery-codes.js';
import { mfaNotice, requireSupportedType, type MfaChangeInput } from './manage.js';
import { msg } from '../../core/i18n/message.js';

export const NO_RECOVERY_CODES = msg('You have no recovery codes.');
export const NEEDS_AUTHENTICATOR = msg('Recovery codes can only be generated once two-factor authentication is active.');

export interface RecoveryCodesView {
  unused: string[];
  total: number;
}

/**
 * The unused recovery codes, shown again (or downloaded). They are as good as the second factor
 * itself, so seeing them needs a recent reauthentication too.
 */
export async function viewRecoveryCodes(deps: LatchkeyDeps, input: Omit<MfaChangeInput, 'client'>): Promise<RecoveryCodesView> {
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  const codes = await deps.store.authenticators.findForUser(input.user.id, 'recovery_codes');
  if (!codes) throw new LatchkeyError('not_found', NO_RECOVERY_CODES);
  return { unused: await unusedRecoveryCodes(deps, codes), total: recoveryCodeTotal(deps.settings, codes) };
}

/**
 * A new set of recovery codes, replacing the old one entirely: the old authenticator row (and
 * with it the marks of its used codes) is deleted and a new one with a new seed created, in one
 * transaction, so every old code stops working at the moment the new ones exist. A use of an old
 * code racing the regeneration finds its row gone and fails.
 */
export async function regenerateRecoveryCodes(deps: LatchkeyDeps, input: MfaChangeInput): Promise<{ codes: string[]; notification: MailOutcome }> {
  const { user } = input;
  requireSupportedType(deps, 'recovery_codes');
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  const seed = newRecoverySeed();
  const notice = await commitChange(deps, async (change) => {
    const { repositories } = change;
    const authenticators = await repositories.authenticators.listForUser(user.id);
    if (!hasSecondFactor(authenticators)) throw new LatchkeyError('invalid_input', NEEDS_AUTHENTICATOR);
    const old = authenticators.find((authenticator) => authenticator.type === 'recovery_codes');
    if (old) await repositories.authenticators.delete(old.id);
    await repositories.authenticators.create({
      userId: user.id,
      type: 'recovery_codes',
      data: sealedAuthenticatorData(deps.settings, user.id, 'recovery_codes', seed),
      createdAt: deps.clock.now(),
    });
    await change.record('authenticator_reset', user.id, input.client, { type: 'recovery_codes' });
    return change.queueMail(mfaNotice(deps, user, 'recovery_codes_generated', input.client));
  });
  const notification = await deliverMail(deps, notice);
  return { codes: recoveryCodes(seed, deps.settings.MFA_RECOVERY_CODE_COUNT, deps.settings.MFA_RECOVERY_CODE_DIGITS), notification };
}
