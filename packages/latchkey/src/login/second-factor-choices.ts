import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { User } from '../account/model.js';
import { LatchkeyError } from '../core/errors.js';
import type { LatchkeyDeps } from '../deps.js';
import { webauthnAuthenticationOptions, type CeremonyOptions } from '../mfa/flows/webauthn.js';
import { webauthnKeys } from '../mfa/webauthn.js';
import type { PendingLoginState } from './pipeline.js';

/**
 * What a login stopped at mfa_authenticate may be answered with, for a door to offer: a code
 * (from an authenticator app, or a recovery code) and a security key. The answer itself goes
 * through continueLogin like any other; these only say what to ask for.
 */
export interface SecondFactorChoices {
  authenticatorApp: boolean;
  /** Recovery codes go in the same field as an app's code, and stand in for any lost factor. */
  recoveryCodes: boolean;
  securityKey: boolean;
}

async function pendingUser(deps: Pick<LatchkeyDeps, 'store'>, pending: PendingLoginState): Promise<User> {
  const user = await deps.store.users.findById(pending.userId);
  // An account gone meanwhile: continueLogin ends such a login; here there is nothing to offer.
  if (!user || !user.isActive) throw new LatchkeyError('not_found', 'No such login.');
  return user;
}

export async function secondFactorChoices(deps: Pick<LatchkeyDeps, 'store'>, pending: PendingLoginState): Promise<SecondFactorChoices> {
  const authenticators = await deps.store.authenticators.listForUser(pending.userId);
  return {
    authenticatorApp: authenticators.some((authenticator) => authenticator.type === 'totp'),
    recoveryCodes: authenticators.some((authenticator) => authenticator.type === 'recovery_codes'),
    securityKey: webauthnKeys(authenticators).length > 0,
  };
}

/**
 * The options for proving one of the user's keys at the login's second step (not found when they
 * have none). Only the client that holds the stopped login, which the password or another first
 * factor opened, is given them: they name the user's credential ids.
 */
export async function securityKeyOptionsForLogin(deps: LatchkeyDeps, pending: PendingLoginState): Promise<CeremonyOptions<PublicKeyCredentialRequestOptionsJSON>> {
  return webauthnAuthenticationOptions(deps, 'authenticate', await pendingUser(deps, pending));
}
