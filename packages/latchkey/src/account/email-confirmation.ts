import { LatchkeyError } from '../core/errors.js';
import { signValue, unsignValue } from '../core/signing.js';
import type { LatchkeyDeps } from '../deps.js';
import type { EmailAddress } from './model.js';
import type { ClientInfo } from '../core/client.js';
import type { Repositories } from '../store.js';
import { sendAccountEmail } from './emails.js';
import { checkMailedCode, codeMinutes, emailVerificationCodePolicy, INCORRECT_CODE, issueMailedCode, type MailedCodeCheck, type MailedCodeState } from './mailed-codes.js';
import { makeUnusablePassword } from './passwords/index.js';
import { accountUrl } from './urls.js';

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
 * `code` and `minutes` instead of `activate_url`). A delivery failure throws 'mail_failed'.
 */
export async function sendEmailConfirmation(deps: LatchkeyDeps, address: EmailAddress, client: ClientInfo): Promise<ConfirmationMail> {
  const limit = await deps.rateLimits.consume('confirm_email', { ip: client.ip, key: address.email });
  if (!limit.allowed) return { sent: false, retryAfterSeconds: limit.retryAfterSeconds };
  const user = await deps.store.users.findById(address.userId);
  // The address's account was deleted meanwhile: there is nothing to confirm, now or later.
  if (!user) return { sent: false, retryAfterSeconds: 0 };
  let mail: ConfirmationMail & { sent: true };
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED) {
    const policy = emailVerificationCodePolicy(deps.settings);
    const { state, code } = issueMailedCode(deps, policy, address.email);
    await sendAccountEmail(deps, { template: 'account/email/email_confirmation', to: address.email, context: { user, email: address.email, code, minutes: codeMinutes(policy) } });
    mail = { sent: true, code: state };
  } else {
    const key = makeConfirmationKey(deps, address);
    await sendAccountEmail(deps, {
      template: 'account/email/email_confirmation',
      to: address.email,
      context: { user, email: address.email, activate_url: accountUrl(deps.settings, 'account_confirm_email', key), key },
    });
    mail = { sent: true };
  }
  await deps.events.emit('email_confirmation_sent', user.id, client, { email: address.email });
  return mail;
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
  const verified = await deps.store.transaction(async (repositories) => {
    const marked = await repositories.emailAddresses.markVerified(address.id);
    if (marked) await voidOtherClaims(repositories, marked);
    return marked;
  });
  if (verified) await deps.events.emit('email_confirmed', userId, client, { email: verified.email, by });
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
  if (!address) throw new LatchkeyError('invalid_key', 'This confirmation link is invalid or has expired.');
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
  const confirmed = await deps.store.transaction(async (repositories) => {
    const verified = await repositories.emailAddresses.markVerified(address.id);
    if (!verified) throw new LatchkeyError('invalid_key', 'This confirmation link is invalid or has expired.');
    await voidOtherClaims(repositories, verified);
    const all = await repositories.emailAddresses.listForUser(address.userId);
    if (!all.some((other) => other.primary && other.verified && other.id !== address.id)) {
      return (await repositories.emailAddresses.setPrimary(address.userId, address.id)) ?? verified;
    }
    return verified;
  });
  await deps.events.emit('email_confirmed', address.userId, client, { email: address.email, ...extra });
  return confirmed;
}
