import { isLatchkeyError, type LatchkeyError, type LatchkeyErrorCode } from '../core/errors.js';

/**
 * The refusals with which a login stage ends a login as it begins, before there is anything to
 * answer: the login_by_code stage (mailed-codes/stage-codes.ts) for an account with no address to mail
 * ('no_email_address'), or whose code mail the request_login_code limit held back
 * ('rate_limited') or the mailer could not send ('mail_failed'). They count as a failed sign-in
 * where the door cannot show the stage's message on the form the login began from: a provider's
 * callback arrives from the provider's site, with no form to go back to.
 */
const STAGE_REFUSALS: ReadonlySet<LatchkeyErrorCode> = new Set<LatchkeyErrorCode>(['no_email_address', 'rate_limited', 'mail_failed']);

/** Whether `error` is a stage's refusal of a beginning login, to be answered as a failed sign-in. */
export function isFailedSignInRefusal(error: unknown): error is LatchkeyError {
  return isLatchkeyError(error) && STAGE_REFUSALS.has(error.code);
}
