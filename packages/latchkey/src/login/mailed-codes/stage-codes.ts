import { confirmEmailByCode, markAddressVerifiedIndirectly, sendEmailConfirmation } from '../../account/email-confirmation.js';
import { checkMailedCode, INCORRECT_CODE, issueMailedCode, loginCodePolicy, sendLoginCodeMail, type MailedCodeState } from '../../account/mailed-codes.js';
import type { EmailAddress, User } from '../../account/model.js';
import type { LoginByCodeRequiredMethod } from '../../config/choices.js';
import type { Settings } from '../../config/settings.js';
import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { FirstFactor, LoginProofs, StageProof } from '../proofs.js';
import { msg } from '../../core/i18n/message.js';

/**
 * The login stages that mail a code and wait for it to be typed back: login_by_code (a code after
 * the first factor, ACCOUNT_LOGIN_BY_CODE_REQUIRED) and verify_email under verification by code
 * (ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED). The code's state travels with the stopped
 * login (PendingLoginState.code), which the door keeps in the client's session: so the code works
 * only for the client whose login asked for it, and it ends with that login. Its mechanics (hash,
 * attempts, single use, expiry) are account/mailed-codes.ts's.
 */

/** A code a stage mailed, and which stage it answers. */
export type StageCode = MailedCodeState & { stage: 'login_by_code' | 'verify_email' };

/** What these stages are given (a part of stages.ts's StageRun, which this module cannot import: stages.ts imports it). */
export interface CodeStageRun {
  deps: LatchkeyDeps;
  user: User;
  proofs: LoginProofs;
  answers: { emailCode?: string | undefined };
  /** The code the stopped login holds, if any. */
  code?: StageCode | undefined;
  context: { client: ClientInfo; takesMailedCodes?: boolean | undefined; confirmationJustSent?: boolean | undefined; sentVerificationCode?: MailedCodeState | undefined };
}

export type CodeStageOutcome =
  | { passed: true; proof?: StageProof }
  /** Stopped: waiting for the code it holds (none when none could be mailed to this client). */
  | { passed: false; code?: StageCode }
  /** The code expired or its attempts are used up: this login cannot go on; the person signs in again. */
  | { passed: false; ended: true };

export const NO_ADDRESS_FOR_CODE = msg('Signing in here needs a code mailed to your email address, and this account has none. Please contact the site administrators.');
const MAIL_FAILED = msg('We could not send your sign-in code just now. Please try again later.');

/** A login's first factor as allauth names the authentication method (its authentication records' `method`). */
function methodOf(factor: FirstFactor): LoginByCodeRequiredMethod | 'code' {
  switch (factor.kind) {
    case 'password':
    case 'admin_password':
      return 'password';
    // allauth records a SAML sign-in as a social account's.
    case 'socialaccount':
    case 'saml':
      return 'socialaccount';
    // A passkey login is recorded by allauth as an "mfa" authentication.
    case 'passkey':
      return 'mfa';
    // A passkey signup proves its address by a mailed code before its passkey is made.
    case 'email_code':
    case 'passkey_signup':
      return 'code';
  }
}

/**
 * Whether ACCOUNT_LOGIN_BY_CODE_REQUIRED asks this login for a mailed code, as allauth's adapter
 * decides (is_login_by_code_required): never for a login that has already given one (a login by
 * code, or this stage passed earlier); always for `true`; for a list, when it names the method of
 * the login's first factor: "password", "socialaccount" (providers and SAML) or "mfa" (a passkey
 * login, recorded as an MFA authentication; the second factor a password login asks for later is
 * not the method the login began with).
 */
export function loginByCodeRequired(settings: Pick<Settings, 'ACCOUNT_LOGIN_BY_CODE_REQUIRED'>, proofs: LoginProofs): boolean {
  if (proofs.some((proof) => proof.kind === 'email_code')) return false;
  const required = settings.ACCOUNT_LOGIN_BY_CODE_REQUIRED;
  if (typeof required === 'boolean') return required;
  const method = methodOf(proofs[0]);
  return method !== 'code' && required.includes(method);
}

/** Where the code goes: the primary address, else a verified one, else any; else the account's own email field. */
async function codeAddressOf(deps: LatchkeyDeps, user: User): Promise<string | undefined> {
  const addresses = await deps.store.emailAddresses.listForUser(user.id);
  const address = addresses.find((candidate) => candidate.primary) ?? addresses.find((candidate) => candidate.verified) ?? addresses[0];
  if (address) return address.email;
  return user.email === '' ? undefined : user.email;
}

/**
 * The login_by_code stage. The first time it stops a login it mails a code (within the
 * request_login_code limit of the address); the code typed back, in the same client, passes it
 * and marks the address verified (as a login by code does), so the later stages (verify_email,
 * MFA) see a login that has proved the mailbox and still ask for the second factor. A wrong code
 * is refused with 'incorrect_code' and uses one of ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS tries; once
 * the code is expired or used up, the login ends and the person signs in again for a new one.
 *
 * An account with no address at all cannot be sent a code: as allauth's stage does, the login is
 * refused ('no_email_address') rather than let through, since skipping the code would make the
 * requirement fall away for exactly the accounts that cannot meet it.
 */
export async function askForLoginCode(run: CodeStageRun): Promise<CodeStageOutcome> {
  const { deps, user, proofs, answers, context } = run;
  if (!loginByCodeRequired(deps.settings, proofs)) return { passed: true };
  const held = run.code?.stage === 'login_by_code' ? run.code : undefined;
  if (held !== undefined && answers.emailCode !== undefined) {
    const check = await checkMailedCode(deps, loginCodePolicy(deps.settings), held, answers.emailCode);
    if (check.status === 'expired') return { passed: false, ended: true };
    if (check.status === 'incorrect') throw new LatchkeyError('incorrect_code', INCORRECT_CODE, { param: 'code' });
    await markAddressVerifiedIndirectly(deps, user.id, held.email, context.client, 'login_code');
    return { passed: true, proof: { kind: 'email_code', email: held.email } };
  }
  if (held !== undefined) return { passed: false, code: held };
  // An answer with no code held (none could be mailed): nothing to check, and no mail for it.
  if (answers.emailCode !== undefined) return { passed: false };
  // A client that cannot answer (the token API keeps nothing between requests) is not mailed a code it cannot use.
  if (context.takesMailedCodes === false) return { passed: false };
  const email = await codeAddressOf(deps, user);
  if (email === undefined) throw new LatchkeyError('no_email_address', NO_ADDRESS_FOR_CODE);
  await deps.rateLimits.enforce('request_login_code', { ip: context.client.ip, key: email });
  const { state, code } = issueMailedCode(deps, loginCodePolicy(deps.settings), email);
  try {
    await sendLoginCodeMail(deps, user, email, code, context.client);
  } catch (error) {
    // The mailer's own message names the mail server: for the log, not for the person.
    if (isLatchkeyError(error, 'mail_failed')) throw new LatchkeyError('mail_failed', MAIL_FAILED, { cause: error });
    throw error;
  }
  return { passed: false, code: { ...state, stage: 'login_by_code' } };
}

/**
 * The verify_email stage under verification by code, for a login whose account has no verified
 * address yet (stages.ts decides that): the code is mailed to `address` (the primary one) the
 * first time the stage stops the login, or taken from the caller that has just mailed it (a
 * signup), and held in the stopped login. The code typed back in the same client verifies the
 * address and carries the login on, whatever ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION says (as
 * allauth's: the code proves this very client, where a link proves only the mailbox). A wrong
 * code is 'incorrect_code' and uses one of ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS
 * tries; an expired or used-up one ends the login (signing in again mails a new code, and so does
 * a resend meanwhile). A mail held back by the confirm_email limit, or that could not be sent,
 * leaves the login waiting without a code: a resend gives it one.
 */
export async function verifyEmailByCode(run: CodeStageRun, address: EmailAddress | undefined): Promise<CodeStageOutcome> {
  const { deps, user, answers, context } = run;
  const held = run.code?.stage === 'verify_email' ? run.code : undefined;
  if (held !== undefined && answers.emailCode !== undefined) {
    const confirmation = await confirmEmailByCode(deps, { userId: user.id, state: held, code: answers.emailCode, client: context.client });
    if (confirmation.status === 'incorrect') throw new LatchkeyError('incorrect_code', INCORRECT_CODE, { param: 'code' });
    if (confirmation.status === 'expired') return { passed: false, ended: true };
    return { passed: true };
  }
  if (held !== undefined) return { passed: false, code: held };
  if (answers.emailCode !== undefined) return { passed: false };
  if (context.sentVerificationCode !== undefined) return { passed: false, code: { ...context.sentVerificationCode, stage: 'verify_email' } };
  if (context.takesMailedCodes === false || context.confirmationJustSent === true || address === undefined) return { passed: false };
  try {
    const mail = await sendEmailConfirmation(deps, address, context.client);
    return mail.sent && mail.code !== undefined ? { passed: false, code: { ...mail.code, stage: 'verify_email' } } : { passed: false };
  } catch (error) {
    // Not sent now: the login waits without a code, and a resend (or the next login) mails one.
    if (!isLatchkeyError(error, 'mail_failed')) throw error;
    return { passed: false };
  }
}
