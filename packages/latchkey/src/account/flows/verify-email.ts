import type { LatchkeyDeps } from '../../deps.js';
import { continueLogin, type LoginResult, type PendingLoginState } from '../../login/pipeline.js';
import type { LoginContext } from '../../login/stages.js';
import { confirmEmail } from '../email-confirmation.js';
import type { EmailAddress } from '../model.js';

export interface VerifyEmailInput {
  /** The key from the confirmation mail. */
  key: unknown;
  /** The login this client keeps waiting at verify_email, if any. */
  waitingLogin: PendingLoginState | undefined;
  context: LoginContext;
}

export interface EmailVerification {
  address: EmailAddress;
  /** The waiting login, carried on through the stages that remain: only when it was this address's user's. */
  login?: LoginResult;
  /**
   * The client's waiting login was this address's user's and is over: it is carried on (`login`),
   * or, with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION off, it waits for nothing more and the person
   * signs in again themselves. Either way the adapter forgets it.
   */
  endsWaitingLogin: boolean;
}

/**
 * Confirms the address a mailed key names (confirmEmail: 'invalid_key', 'email_taken'). Confirming
 * proves the address, not the person holding this client: it carries on only a login that, with
 * the right first factor, stopped for this very user's verification in this client (a password
 * login or a signup), only through the stages that remain, and only when the project asks for it
 * (ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION, off by default as allauth's). A key followed anywhere else
 * confirms the address and signs nobody in.
 */
export async function verifyEmail(deps: LatchkeyDeps, input: VerifyEmailInput): Promise<EmailVerification> {
  const address = await confirmEmail(deps, input.key, input.context.client);
  const waiting = input.waitingLogin;
  if (waiting?.userId !== address.userId) return { address, endsWaitingLogin: false };
  if (!deps.settings.ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION) return { address, endsWaitingLogin: true };
  return { address, login: await continueLogin(deps, waiting, {}, input.context), endsWaitingLogin: true };
}
