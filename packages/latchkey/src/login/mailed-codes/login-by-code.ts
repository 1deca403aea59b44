import { findUserByLogin } from '../../account/credentials.js';
import { markAddressVerifiedIndirectly } from '../../account/email-confirmation.js';
import type { MailOutcome } from '../../account/emails.js';
import { checkMailedCode, INCORRECT_CODE, issueMailedCode, loginCodePolicy, mailedCodeIsLive, sendLoginCodeMail, type MailedCodeState } from '../../account/mailed-codes.js';
import type { User } from '../../account/model.js';
import type { ClientInfo } from '../../core/client.js';
import { LatchkeyError } from '../../core/errors.js';
import { tryNormalizeEmail } from '../../core/identifiers.js';
import type { LatchkeyDeps } from '../../deps.js';
import { beginLogin, type LoginResult } from '../pipeline.js';
import type { LoginContext } from '../stages.js';

/**
 * Login by a mailed code (ACCOUNT_LOGIN_BY_CODE_ENABLED), as allauth's: the person gives an
 * address, a short code goes to it, and the code typed back into the same client is the login's
 * first factor (`email_code`), after which the pipeline's stages run as for any other login, MFA
 * included. The pages and the headless API both call this module and keep its state in the
 * client's session, which is what binds the code to the client that asked for it. The code's
 * mechanics (hash, attempts, single use, expiry) are account/mailed-codes.ts's, shared with the
 * codes the login stages mail (login_by_code, verify_email by code).
 */

export const INCORRECT_LOGIN_CODE = INCORRECT_CODE;

/**
 * What a client keeps of a requested code (account/mailed-codes.ts). It looks the same whether or
 * not the address has an account, because nothing about the account is decided when it is made.
 */
export type LoginCodeState = MailedCodeState;

export interface LoginCodeRequested {
  state: LoginCodeState;
  /**
   * Settles once the mail was handed over, skipped (no account) or failed; never rejects. Adapters
   * do not wait for it: the answer must not depend on whether the address has an account.
   */
  delivery: Promise<MailOutcome>;
}

export type LoginCodeConfirmation =
  /** A wrong code; `state` is the login to keep, or undefined once the attempts are used up. */
  | { status: 'incorrect'; state: LoginCodeState | undefined }
  /** The code has expired, was used already or its attempts are gone: the client must ask anew. */
  | { status: 'expired' }
  | { status: 'login'; result: LoginResult };

/**
 * The active account an address signs in to by code: the one a login by email would find (the
 * verified owner first, never an ambiguous claim), whether or not the project lets people type
 * their address on the password form (ACCOUNT_LOGIN_METHODS), as allauth's code login does.
 */
async function accountFor(deps: LatchkeyDeps, email: string): Promise<User | undefined> {
  const byEmail = { settings: { ...deps.settings, ACCOUNT_LOGIN_METHODS: ['email' as const] }, store: deps.store };
  const user = await findUserByLogin(byEmail, email);
  return user?.isActive ? user : undefined;
}

async function mailCode(deps: LatchkeyDeps, email: string, code: string, client: ClientInfo): Promise<MailOutcome> {
  try {
    const user = await accountFor(deps, email);
    // An unknown address gets nothing: there is no "unknown account" mail (no such setting here).
    if (!user) return { status: 'skipped' };
    await sendLoginCodeMail(deps, user, email, code, client);
    return { status: 'sent' };
  } catch (error) {
    return { status: 'failed', error };
  }
}

/**
 * Starts a login by code for `email`. The request is limited per IP and per address
 * (request_login_code) before anything else, so known and unknown addresses count alike and a
 * mailbox cannot be flooded; the account lookup and the mail are background work, which starts
 * only once the door's answer has been sent (docs/architecture.md, "Work after the answer"), so
 * neither the answer nor its timing tells whether the address has an account.
 */
export async function requestLoginCode(deps: LatchkeyDeps, input: { email: string; client: ClientInfo }): Promise<LoginCodeRequested> {
  if (input.email.trim() === '') throw new LatchkeyError('invalid_input', 'This field is required.', { param: 'email', reason: 'required' });
  const email = tryNormalizeEmail(input.email);
  await deps.rateLimits.enforce('request_login_code', email === undefined ? { ip: input.client.ip } : { ip: input.client.ip, key: email });
  if (email === undefined) throw new LatchkeyError('invalid_email', 'Enter a valid email address.', { param: 'email' });
  const { state, code } = issueMailedCode(deps, loginCodePolicy(deps.settings), email);
  return { state, delivery: deps.background.run(() => mailCode(deps, email, code, input.client)) };
}

/** Whether the state can still take a code (it is kept no longer than its code lives). */
export function loginCodeIsLive(deps: Pick<LatchkeyDeps, 'clock'>, state: LoginCodeState): boolean {
  return mailedCodeIsLive(deps, state);
}

/**
 * Checks a code against the client's state. A wrong code uses one of the MAX_ATTEMPTS tries, and
 * the last one drops the login; a right one is used once (a claim), then the account's login
 * begins with the `email_code` first factor, so verification and MFA stages still apply. A code
 * login proves the person reads mail at the address: as allauth does, the address is marked
 * verified (and other accounts' unverified claims to it lapse, as with a confirmation link).
 */
export async function confirmLoginCode(deps: LatchkeyDeps, state: LoginCodeState, input: LoginContext & { code: string }): Promise<LoginCodeConfirmation> {
  const { code, ...context } = input;
  const check = await checkMailedCode(deps, loginCodePolicy(deps.settings), state, code);
  if (check.status !== 'right') return check;
  const user = await accountFor(deps, state.email);
  // The account went away (or was deactivated) after the code was mailed: nothing to sign in to.
  if (!user) return { status: 'incorrect', state: undefined };
  await markAddressVerifiedIndirectly(deps, user.id, state.email, context.client, 'login_code');
  const fresh = (await deps.store.users.findById(user.id)) ?? user;
  return { status: 'login', result: await beginLogin(deps, fresh, { kind: 'email_code', email: state.email }, context) };
}
