import { securityNotice, siteLink } from '../../account/emails.js';
import type { EmailMessage } from '../../mail/ports.js';
import type { ClientInfo } from '../../core/client.js';
import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { Authenticator, AuthenticatorType } from '../model.js';
import type { User } from '../../account/model.js';
import { recoveryCodeTotal, unusedRecoveryCodes } from '../authenticators.js';
import { webauthnKeys, type WebauthnKey } from '../webauthn.js';
import { msg } from '../../core/i18n/message.js';

/** What every change to a user's second factors is given: who, from where, and when they last proved it. */
export interface MfaChangeInput {
  user: User;
  client: ClientInfo;
  /** When the user last logged in or reauthenticated (the adapter reads it from the session). */
  lastAuthenticatedAt: Date | undefined;
}

export type MfaNotification = 'totp_activated' | 'totp_deactivated' | 'recovery_codes_generated' | 'webauthn_added' | 'webauthn_removed' | 'authenticator_removed_by_admin';

/**
 * The notice telling the account's owner that its second factors changed (allauth.mfa's
 * notification mails), to queue with the change: with a link to the 2FA page, unless the project
 * serves no pages (HEADLESS_ONLY): its front end's routes are its own, and a link to a 404 would be
 * worse than none. `details` are the template's own (what an administrator removed).
 */
export function mfaNotice(deps: LatchkeyDeps, user: User, template: MfaNotification, client: ClientInfo, details: Record<string, unknown> = {}): EmailMessage | undefined {
  const context = deps.settings.HEADLESS_ONLY ? {} : { mfa_url: siteLink(deps, deps.urls.urlFor('mfa_index')) };
  return securityNotice(deps, user, `mfa/email/${template}`, client, { ...details, ...context });
}

/**
 * Why a user without a verified address may not add a second factor (an app or a key): the
 * address is how they would hear of the change and get back in without it.
 */
export const EMAIL_UNVERIFIED = msg('You cannot activate two-factor authentication until you have verified your email address.');

/** Refuses, with 'not_found', a type the project does not offer (MFA_SUPPORTED_TYPES). */
export function requireSupportedType(deps: Pick<LatchkeyDeps, 'settings'>, type: AuthenticatorType): void {
  if (!deps.settings.MFA_SUPPORTED_TYPES.includes(type)) throw new LatchkeyError('not_found', 'This kind of authenticator is not available.');
}

export interface MfaOverview {
  types: Record<AuthenticatorType, boolean>;
  totp: Authenticator | undefined;
  /** The user's security keys and passkeys, oldest first. */
  webauthn: WebauthnKey[];
  recoveryCodes: (Authenticator & { unused: number; total: number }) | undefined;
}

/**
 * What the user has set up, for the index page and the headless authenticators list: every
 * authenticator they have, even of a type since taken out of MFA_SUPPORTED_TYPES (they still
 * need it to log in, so they must be able to see and remove it); `types` says what may be set up.
 */
export async function mfaOverview(deps: LatchkeyDeps, user: User): Promise<MfaOverview> {
  const authenticators = await deps.store.authenticators.listForUser(user.id);
  const codes = authenticators.find((authenticator) => authenticator.type === 'recovery_codes');
  const supported = deps.settings.MFA_SUPPORTED_TYPES;
  return {
    types: { totp: supported.includes('totp'), recovery_codes: supported.includes('recovery_codes'), webauthn: supported.includes('webauthn') },
    totp: authenticators.find((authenticator) => authenticator.type === 'totp'),
    webauthn: webauthnKeys(authenticators),
    recoveryCodes: codes && {
      ...codes,
      unused: (await unusedRecoveryCodes(deps, codes)).length,
      total: recoveryCodeTotal(deps.settings, codes),
    },
  };
}
