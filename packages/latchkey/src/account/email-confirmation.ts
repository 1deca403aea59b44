import { isLatchkeyError, LatchkeyError } from '../core/errors.js';
import { signValue, unsignValue } from '../core/signing.js';
import type { LatchkeyDeps } from '../deps.js';
import type { EmailMessage } from '../mail/ports.js';
import type { EmailAddress, User } from './model.js';
import type { ClientInfo } from '../core/client.js';
import type { Repositories } from '../store.js';
import { commitChange, deliverMail, type ChangeWriter, type QueuedMail } from './changes.js';
import { mailLanguage, renderAccountEmail } from './emails.js';
import { checkMailedCode, codeMinutes, emailVerificationCodePolicy, INCORRECT_CODE, issueMailedCode, type MailedCodeCheck, type MailedCodeState } from './mailed-codes.js';
import { msgid } from '../core/i18n/message.js';

/** The one answer to a confirmation key that is forged, used, expired or missing. */
export const INVALID_CONFIRMATION_KEY = msgid('This confirmation link is invalid or has expired.');
import { makeUnusablePassword } from './passwords/index.js';

const PURPOSE = 'email-confirmation';

/**
 * Confirmation keys are signed, not stored (as allauth's HMAC confirmations): the key names the
 * address row and the address itself, so it confirms only that address of that user, and it
 * expires after ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS. It works once: an address already
 * verified is not confirmed again.
 */
export function makeConfirmationKey(deps: Pick<LatchkeyDeps, 'settings' | 'clock'>, address: EmailAddress): string {
  return signValue(deps.settings.SECRET_KEY, PURPOSE, `${address.id}:${address.email}`, deps.clock.now());
}

/** The unverified address a key names, or undefined for an invalid, expired, used or foreign key. */
export async function addressForKey(deps: Pick<LatchkeyDeps, 'settings' | 'clock' | 'store'>, key: unknown): Promise<EmailAddress | undefined> {
  const maxAge = deps.settings.ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS * 86400;
  const value = unsignValue(deps.settings.SECRET_KEY, PURPOSE, key, maxAge, deps.clock.now());
  const match = value === undefined ? null : /^(\d+):(.+)$/.exec(value);
  if (!match) return undefined;
  const address = await deps.store.emailAddresses.findById(Number(match[1]));
  if (!address || address.email !== match[2] || address.verified) return undefined;
  return address;
}

/**
 * Whether a confirmation mail went, and when not (the confirm_email limit held it back), how long
 * until one may. Under verification by code, a mail that went carries a code: `code` is its state,
 * for the caller to keep in the session of the client that asked (the code works nowhere else).
 */
export type ConfirmationMail = { sent: true; code?: MailedCodeState } | { sent: false; retryAfterSeconds: number };

/**
 * Mails a confirmation for the address, within the confirm_email rate limit (per address): a
 * link, or under ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED a short code (same templates, with
 * `code` and `minutes` instead of `activate_url`). The mail and its audit record are committed
 * together before it is sent (queueEmailConfirmation). A delivery failure throws 'mail_failed';
 * the outbox tries the mail again later all the same.
 */
export async function sendEmailConfirmation(deps: LatchkeyDeps, address: EmailAddress, client: ClientInfo): Promise<ConfirmationMail> {
  const limit = await deps.rateLimits.consume('confirm_email', { ip: client.ip, key: address.email });
  if (!limit.allowed) return { sent: false, retryAfterSeconds: limit.retryAfterSeconds };
  const user = await deps.store.users.findById(address.userId);
  // The address's account was deleted meanwhile: there is nothing to confirm, now or later.
  if (!user) return { sent: false, retryAfterSeconds: 0 };
  const queued = await commitChange(deps, (change) => queueEmailConfirmation(deps, change, user, address, client));
  const outcome = await deliverMail(deps, queued.mail);
  if (outcome.status === 'failed') throw mailFailed(outcome.error);
  return { sent: true, ...(queued.code === undefined ? {} : { code: queued.code }) };
}

/** A failed delivery as the callers of sendEmailConfirmation expect it: 'mail_failed'. */
function mailFailed(error: unknown): LatchkeyError {
  return isLatchkeyError(error, 'mail_failed') ? error : new LatchkeyError('mail_failed', 'The email could not be sent.', { cause: error });
}

/**
 * Queues the confirmation mail of the address, and its audit record (email_confirmation_sent), in
 * the transaction of `change`: a signup's, so that the account never exists without its mail. The
 * caller has counted the confirm_email limit. Under verification by code, `code` is the state of
 * the code the mail carries.
 */
export async function queueEmailConfirmation(
  deps: LatchkeyDeps,
  change: ChangeWriter,
  user: User,
  address: EmailAddress,
  client: ClientInfo,
): Promise<{ mail: QueuedMail; code?: MailedCodeState }> {
  const { message, code } = confirmationMessage(deps, user, address, mailLanguage(deps, user, client));
  // A message in, a queued mail out: queueMail passes undefined through only for no message.
  const mail = (await change.queueMail(message))!;
  await change.record('email_confirmation_sent', user.id, client, { email: address.email });
  return { mail, ...(code === undefined ? {} : { code }) };
}

function confirmationMessage(deps: LatchkeyDeps, user: User, address: EmailAddress, language: string): { message: EmailMessage; code?: MailedCodeState } {
  const template = 'account/email/email_confirmation';
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED) {
    const policy = emailVerificationCodePolicy(deps.settings);
    const { state, code } = issueMailedCode(deps, policy, address.email);
    return { message: renderAccountEmail(deps, { template, to: address.email, language, context: { user, email: address.email, code, minutes: codeMinutes(policy) } }), code: state };
  }
  const key = makeConfirmationKey(deps, address);
  const context = { user, email: address.email, activate_url: deps.adapter.getEmailConfirmationUrl(key), key };
  return { message: renderAccountEmail(deps, { template, to: address.email, language, context }) };
}

/**
 * A verification code's state that no mail carries: what a client is given where an answer must
 * look like a real one (a signup or an added address whose address another account has verified:
 * its owner is told by a notice instead). Its code is thrown away, so no answer can be right;
 * wrong answers use up its attempts exactly as a real code's do.
 */
export function unmailedVerificationCode(deps: Pick<LatchkeyDeps, 'settings' | 'clock'>, email: string): MailedCodeState {
  return issueMailedCode(deps, emailVerificationCodePolicy(deps.settings), email).state;
}

/**
 * What an address's verification does to the other accounts that merely claimed it, unverified:
 * their row goes, their sessions end, and an account whose primary address it was loses its
 * password (account pre-hijacking: an attacker who signed up first with someone else's address
 * must not keep a way in once it is proven to be the other's). Run in the transaction that marks
 * `verified` verified, by every way an address gets verified (a mailed link, the admin).
 */
export async function voidOtherClaims(repositories: Repositories, verified: EmailAddress): Promise<void> {
  for (const claim of await repositories.emailAddresses.listByEmail(verified.email)) {
    if (claim.userId === verified.userId || claim.verified) continue;
    await repositories.emailAddresses.remove(claim.id);
    await repositories.sessions.deleteForUser(claim.userId);
    const claimant = await repositories.users.findById(claim.userId);
    if (claimant?.email === verified.email) await repositories.users.update(claim.userId, { password: makeUnusablePassword() });
  }
}

/**
 * Marks verified an address of the user that a mailed code has just proved (allauth's "verify
 * email indirectly": a login by code, the code asked for after the password). Other accounts'
 * unverified claims to it lapse, as with a confirmation link. Nothing happens for an address the
 * user does not have or has verified already.
 */
export async function markAddressVerifiedIndirectly(deps: LatchkeyDeps, userId: number, email: string, client: ClientInfo, by: string): Promise<void> {
  const address = await deps.store.emailAddresses.findForUser(userId, email);
  if (!address || address.verified) return;
  await commitChange(deps, async (change) => {
    const marked = await change.repositories.emailAddresses.markVerified(address.id);
    if (!marked) return;
    await voidOtherClaims(change.repositories, marked);
    await change.record('email_confirmed', userId, client, { email: marked.email, by });
  });
}

/**
 * Confirms the address a key names. When the user has no verified primary address it becomes the
 * primary one. Refused with 'invalid_key' for anything but a live key, and with 'email_taken' when
 * another account verified the same address meanwhile.
 *
 * Whoever proves the address owns it. Other accounts that merely claimed it, unverified, lose the
 * claim in the same transaction: their row goes, their sessions end, and an account whose primary
 * address it was loses its password (account pre-hijacking: an attacker who signed up first with
 * someone else's address must not keep a way in once the real owner proves it is theirs).
 */
export async function confirmEmail(deps: LatchkeyDeps, key: unknown, client: ClientInfo): Promise<EmailAddress> {
  const address = await addressForKey(deps, key);
  if (!address) throw new LatchkeyError('invalid_key', INVALID_CONFIRMATION_KEY);
  return confirmAddress(deps, address, client);
}

export type CodeConfirmation = { status: 'confirmed'; address: EmailAddress } | Exclude<MailedCodeCheck, { status: 'right' }>;

/**
 * Confirms the address of user `userId` that a mailed verification code names (`state`, as the
 * asking client kept it), if `code` is right: as a link confirms it (confirmAddress). 'incorrect'
 * uses one of ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS tries; 'expired' means the code is
 * past its TIMEOUT, used, or out of tries. With `peek`, a right code is only checked, not used
 * (headless GET auth/email/verify), though the check still takes one of the tries.
 */
export async function confirmEmailByCode(
  deps: LatchkeyDeps,
  input: { userId: number; state: MailedCodeState; code: string; client: ClientInfo; peek?: boolean },
): Promise<CodeConfirmation> {
  const check = await checkMailedCode(deps, emailVerificationCodePolicy(deps.settings), input.state, input.code, { use: input.peek !== true });
  if (check.status !== 'right') return check;
  const address = await deps.store.emailAddresses.findForUser(input.userId, input.state.email);
  // The address was removed meanwhile: the code has nothing left to confirm.
  if (!address) return { status: 'expired' };
  if (input.peek === true || address.verified) return { status: 'confirmed', address };
  return { status: 'confirmed', address: await confirmAddress(deps, address, input.client, { by: 'code' }) };
}

/** The refusal of a wrong verification code, in allauth's words. */
export const INCORRECT_VERIFICATION_CODE = INCORRECT_CODE;

/**
 * Marks the address verified (a link or a code proved it). When the user has no verified primary
 * address it becomes the primary one. Refused with 'invalid_key' when it was verified meanwhile,
 * and with 'email_taken' when another account verified the same address meanwhile.
 */
async function confirmAddress(deps: LatchkeyDeps, address: EmailAddress, client: ClientInfo, extra: Record<string, string> = {}): Promise<EmailAddress> {
  return commitChange(deps, async (change) => {
    const { repositories } = change;
    // Only if still unverified: the same key used twice at once (on two instances) confirms once.
    const verified = await repositories.emailAddresses.markVerified(address.id, { unverifiedOnly: true });
    if (!verified) throw new LatchkeyError('invalid_key', INVALID_CONFIRMATION_KEY);
    await voidOtherClaims(repositories, verified);
    await change.record('email_confirmed', address.userId, client, { email: address.email, ...extra });
    const all = await repositories.emailAddresses.listForUser(address.userId);
    if (!all.some((other) => other.primary && other.verified && other.id !== address.id)) {
      return (await repositories.emailAddresses.setPrimary(address.userId, address.id)) ?? verified;
    }
    return verified;
  });
}
