import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { LatchkeyDeps } from '../../deps.js';
import { continueLogin, type LoginResult, type PendingLoginState } from '../../login/pipeline.js';
import type { LoginContext } from '../../login/stages.js';
import { confirmEmail, confirmEmailByCode, unmailedVerificationCode } from '../email-confirmation.js';
import { checkMailedCode, emailVerificationCodePolicy, type MailedCodeState } from '../mailed-codes.js';
import type { EmailAddress, User } from '../model.js';
import { resendEmailConfirmation, resendLoginVerification, WAIT_BEFORE_RESENDING } from './manage-email.js';

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

/**
 * Verification by code (ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED): the code the client was
 * mailed, checked against the state its session keeps, which binds the code to that session:
 * - a login waiting at verify_email holds its code itself (PendingLoginState.code): a right code
 *   verifies the address and carries the login on through the stages that remain (MFA included),
 *   signing the person in when none remains, as allauth does after a code;
 * - a signed-in user's session holds the code of the address they added (or asked again for):
 *   `held`, with their id;
 * - a signup whose address already had an account holds a code no mail carries (`held` with no
 *   user), so that its wrong answers and its end read exactly as a new account's.
 */
export interface HeldVerificationCode {
  /** The signed-in user whose address it verifies; null for a signup's code that no mail carries. */
  userId: number | null;
  state: MailedCodeState;
}

export interface CodeVerificationInput {
  code: string;
  /** The login this client keeps waiting at verify_email, if any. */
  waitingLogin: PendingLoginState | undefined;
  held: HeldVerificationCode | undefined;
  /** Who is signed in in this client, if anyone. */
  signedInUserId: number | undefined;
  context: LoginContext;
}

export type CodeVerification =
  /** The waiting login's code was right: the login carried on. */
  | { status: 'login'; result: LoginResult }
  /** The held code was right: the signed-in user's address is verified; the client forgets the code. */
  | { status: 'confirmed'; address: EmailAddress }
  /** A wrong code: one try used. */
  | { status: 'incorrect' }
  /** The held code is expired, used or out of tries: the client forgets it and asks for a new one. */
  | { status: 'expired' }
  /** No code is pending in this client. */
  | { status: 'none' };

/** Whether the waiting login holds a code of the verify_email stage. */
function waitsForCode(waiting: PendingLoginState | undefined): waiting is PendingLoginState {
  return waiting?.code?.stage === 'verify_email';
}

export async function verifyEmailWithCode(deps: LatchkeyDeps, input: CodeVerificationInput): Promise<CodeVerification> {
  const { waitingLogin, held, code } = input;
  if (waitsForCode(waitingLogin)) {
    try {
      return { status: 'login', result: await continueLogin(deps, waitingLogin, { emailCode: code }, input.context) };
    } catch (error) {
      if (isLatchkeyError(error, 'incorrect_code')) return { status: 'incorrect' };
      throw error;
    }
  }
  if (held === undefined) return { status: 'none' };
  if (held.userId === null) {
    const check = await checkMailedCode(deps, emailVerificationCodePolicy(deps.settings), held.state, code);
    return check.status === 'incorrect' ? { status: 'incorrect' } : { status: 'expired' };
  }
  if (held.userId !== input.signedInUserId) return { status: 'none' };
  const confirmation = await confirmEmailByCode(deps, { userId: held.userId, state: held.state, code, client: input.context.client });
  return confirmation.status === 'confirmed' ? { status: 'confirmed', address: confirmation.address } : confirmation;
}

export type CodeLookup =
  | { status: 'found'; email: string; user: User; authenticating: boolean }
  | { status: 'incorrect' }
  | { status: 'expired' }
  | { status: 'none' };

/**
 * What a code would verify, without using it (headless GET auth/email/verify with the code as its
 * key): the address, its account, and whether confirming it carries this client's login on. The
 * look takes one of the code's tries all the same, so it cannot be used to guess for free.
 */
export async function lookUpVerificationCode(deps: LatchkeyDeps, input: Omit<CodeVerificationInput, 'context'> & { client: ClientInfo }): Promise<CodeLookup> {
  const { waitingLogin, held } = input;
  let owner: { userId: number; state: MailedCodeState; authenticating: boolean } | undefined;
  if (waitsForCode(waitingLogin)) owner = { userId: waitingLogin.userId, state: waitingLogin.code!, authenticating: true };
  else if (held?.userId === null) {
    const check = await checkMailedCode(deps, emailVerificationCodePolicy(deps.settings), held.state, input.code, { use: false });
    return check.status === 'incorrect' ? { status: 'incorrect' } : { status: 'expired' };
  } else if (held !== undefined && held.userId === input.signedInUserId) owner = { userId: held.userId, state: held.state, authenticating: false };
  if (owner === undefined) return { status: 'none' };
  const confirmation = await confirmEmailByCode(deps, { userId: owner.userId, state: owner.state, code: input.code, client: input.client, peek: true });
  if (confirmation.status !== 'confirmed') return confirmation;
  const user = await deps.store.users.findById(owner.userId);
  return user ? { status: 'found', email: confirmation.address.email, user, authenticating: owner.authenticating } : { status: 'expired' };
}

/** What a resend leaves for the client to keep: the waiting login with its new code, or the new held code. */
export type CodeResend = { waitingLogin: PendingLoginState } | { held: HeldVerificationCode } | { status: 'none' };

/**
 * Mails a new code in place of the pending one (allauth's auth/email/verify/resend), within the
 * confirm_email limit ('rate_limited'); the old code stops working with the state it replaces.
 * A signup's code that no mail carries is replaced by another, the limit counted as for a real
 * one, so the two still read the same.
 */
export async function resendVerificationCode(deps: LatchkeyDeps, input: Omit<CodeVerificationInput, 'code' | 'context'> & { client: ClientInfo }): Promise<CodeResend> {
  const { waitingLogin, held, client } = input;
  if (waitingLogin !== undefined) {
    const sent = await resendLoginVerification(deps, { userId: waitingLogin.userId, client });
    if (sent?.code === undefined) return { waitingLogin };
    return { waitingLogin: { ...waitingLogin, code: { ...sent.code, stage: 'verify_email' } } };
  }
  if (held === undefined) return { status: 'none' };
  if (held.userId === null) {
    const limit = await deps.rateLimits.consume('confirm_email', { ip: client.ip, key: held.state.email });
    if (!limit.allowed) throw new RateLimitedError('confirm_email', Math.max(1, limit.retryAfterSeconds), WAIT_BEFORE_RESENDING);
    return { held: { userId: null, state: unmailedVerificationCode(deps, held.state.email) } };
  }
  const user = held.userId === input.signedInUserId ? await deps.store.users.findById(held.userId) : undefined;
  if (!user) return { status: 'none' };
  const sent = await resendEmailConfirmation(deps, { user, email: held.state.email, client });
  return sent.code === undefined ? { status: 'none' } : { held: { userId: user.id, state: sent.code } };
}
