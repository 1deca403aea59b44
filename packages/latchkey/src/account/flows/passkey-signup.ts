import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import { continueLogin, type LoginResult, type PendingLoginState } from '../../login/pipeline.js';
import type { FirstFactor } from '../../login/proofs.js';
import type { LoginContext } from '../../login/stages.js';
import { signupPasskeyOptions, type CeremonyOptions, type SignupPasskeyAnswer } from '../../mfa/flows/webauthn.js';
import type { User } from '../model.js';
import { signupWithoutPassword, type SignupIdentityInput, type SignupResult } from './signup.js';
import { msg } from '../../core/i18n/message.js';

/**
 * Passkey signup (MFA_PASSKEY_SIGNUP_ENABLED), as allauth's: an account made from an address (and,
 * where the project has usernames, a username) and a passkey, never a password. One journey for
 * every door: the pages (/accounts/2fa/webauthn/signup/) and the headless API
 * (auth/webauthn/signup) call these, and keep what they return in the client's session as for any
 * signup and login (http/kit/session-state.ts, http/kit/webauthn-ceremony.ts).
 *
 * 1. beginPasskeySignup: the signup form without a password, through signup.ts's rules (open or
 *    closed, the signup rate limit, the adapter's cleaning hooks, and for an address that has an
 *    account the same answer plus a mail to its owner). The new account's login, whose first
 *    factor is `passkey_signup`, waits at verify_email: the door keeps it (settleSignup).
 * 2. The address is verified by the mailed code (start-up requires mandatory verification by
 *    code), which carries the login on to its mfa_signup_webauthn stage.
 * 3. passkeySignupOptions: the creation options of the account's passkey (discoverable, the person
 *    verified); the door keeps the ceremony (purpose 'register') and gives the options out.
 * 4. completePasskeySignup: the browser's new passkey, checked against that ceremony and stored,
 *    passes the stage and ends the login: 'authenticated', for the door to settle (settleLogin).
 *    A bad passkey throws 'incorrect_code' and the login keeps waiting for another.
 *
 * Steps 3 and 4 take the stopped login the door kept; the door checks that it waits at
 * mfa_signup_webauthn (loginWaitingAt) and answers its own "nothing pending" otherwise.
 */

export const PASSKEY_SIGNUP: FirstFactor = { kind: 'passkey_signup' };
export const PASSKEY_SIGNUP_UNAVAILABLE = msg('Signing up with a passkey is not available.');
export const NO_PASSKEY_SIGNUP = msg('No passkey signup is waiting.');

function requirePasskeySignup(deps: Pick<LatchkeyDeps, 'settings'>): void {
  if (!deps.settings.MFA_PASSKEY_SIGNUP_ENABLED) throw new LatchkeyError('not_found', PASSKEY_SIGNUP_UNAVAILABLE);
}

/** Step 1: the account, without a password; its login waits for the address (see signup.ts for the result). */
export async function beginPasskeySignup(deps: LatchkeyDeps, input: SignupIdentityInput): Promise<SignupResult> {
  requirePasskeySignup(deps);
  return signupWithoutPassword(deps, input, PASSKEY_SIGNUP);
}

/** The new user of a stopped passkey signup; anything else is 'not_found' (the door should have checked). */
async function signupUser(deps: LatchkeyDeps, pending: PendingLoginState): Promise<User> {
  requirePasskeySignup(deps);
  const user = pending.proofs[0].kind === 'passkey_signup' ? await deps.store.users.findById(pending.userId) : undefined;
  if (!user) throw new LatchkeyError('not_found', NO_PASSKEY_SIGNUP);
  return user;
}

/** Step 3: the options for the account's passkey, and the ceremony for the door to keep. */
export async function passkeySignupOptions(deps: LatchkeyDeps, pending: PendingLoginState): Promise<CeremonyOptions<PublicKeyCredentialCreationOptionsJSON>> {
  return signupPasskeyOptions(deps, await signupUser(deps, pending));
}

/**
 * Step 4: the new passkey ends the signup. The pipeline runs the remaining stages again (the
 * account may have changed meanwhile: deactivated, its address no longer verified), and its last
 * one stores the passkey (mfa/flows/webauthn.ts addSignupPasskey).
 */
export async function completePasskeySignup(deps: LatchkeyDeps, pending: PendingLoginState, answer: SignupPasskeyAnswer, context: LoginContext): Promise<LoginResult> {
  await signupUser(deps, pending);
  return continueLogin(deps, pending, { signupPasskey: answer }, context);
}
