import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { EmailMessage } from '../../mail/ports.js';
import type { EmailAddress, User } from '../model.js';
import { commitChange, deliverMail, type QueuedMail } from '../changes.js';
import { mailLanguage, renderAccountEmail } from '../emails.js';
import { queueEmailConfirmation, sendEmailConfirmation, unmailedVerificationCode } from '../email-confirmation.js';
import type { MailedCodeState } from '../mailed-codes.js';
import type { ClientInfo } from '../../core/client.js';
import { tryNormalizeEmail, validateEmail } from '../../core/identifiers.js';
import { requireRecentAuthentication } from './reauthenticate.js';
import { accountExistsNotice, refundMailAttempt } from './signup.js';
import { msg, nmsg, type Message } from '../../core/i18n/message.js';

export const ALREADY_YOURS = msg('This email address is already associated with this account.');
export const NOT_YOURS = msg('Select one of your email addresses.');
export const CANNOT_REMOVE_PRIMARY = msg('You cannot remove your primary email address.');
export const PRIMARY_MUST_BE_VERIFIED = msg('Your primary email address must be verified.');
export const ALREADY_VERIFIED = msg('This email address is already verified.');
export const WAIT_BEFORE_RESENDING = msg('A confirmation email was sent to this address a moment ago. Please wait a few minutes before asking again.');

export function tooManyAddresses(max: number): Message {
  return nmsg('You cannot add more than {max} email address.', 'You cannot add more than {max} email addresses.', max, { max });
}

/** One action of the email page: who asks, from where, and the address typed or chosen. */
export interface ManageEmailInput {
  user: User;
  email: string;
  client: ClientInfo;
}

/**
 * An action that changes the account's addresses (add, remove, make primary): it needs a login or
 * reauthentication within the window (allauth's reauthentication, 5 minutes), so that a session
 * left open on a shared computer cannot move the account to another address. The adapter passes
 * when the session last proved who the user is; undefined when it never did.
 */
export interface ChangeEmailInput extends ManageEmailInput {
  lastAuthenticatedAt: Date | undefined;
}

/**
 * A confirmation mailed (again) for one address. Under verification by code, `code` is the state
 * of the code it carried, for the adapter to keep in the asking client's session: the code works
 * there only. Where the address is another account's, `code` is one no mail carries, so the
 * answer and the code form look the same.
 */
export interface AddressConfirmation {
  address: EmailAddress;
  code?: MailedCodeState;
}

/** The user's addresses, primary first, for the email page and the API. */
export function listEmailAddresses(deps: Pick<LatchkeyDeps, 'store'>, user: User): Promise<EmailAddress[]> {
  return deps.store.emailAddresses.listForUser(user.id);
}

/**
 * Adds an address, unverified, and mails a confirmation link to it. When another account has
 * verified the address, it is listed all the same (it can never be confirmed: the database keeps
 * a verified address to one account) and that address's holder gets a neutral notice instead of
 * a link; the page, the list and later "send again" look the same either way, so the form cannot
 * be used to find out which addresses have accounts. An address only claimed (unverified)
 * elsewhere is added too: whoever confirms it owns it, and confirmEmail voids the other claims.
 */
export async function addEmailAddress(deps: LatchkeyDeps, input: ChangeEmailInput): Promise<{ email: string; mailFailed: boolean; code?: MailedCodeState }> {
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  await deps.rateLimits.enforce('manage_email', { ip: input.client.ip, userId: input.user.id });
  const email = validateEmail(await deps.adapter.cleanEmail(validateEmail(input.email)));
  const max = deps.settings.ACCOUNT_MAX_EMAIL_ADDRESSES;
  // The confirm_email limit is counted first, so that the mail can be queued with the address.
  const mayMail = (await deps.rateLimits.consume('confirm_email', { ip: input.client.ip, key: email })).allowed;
  let added: { elsewhere: boolean; mail?: QueuedMail | undefined; code?: MailedCodeState };
  try {
    // The address, its email_added record and its mail (the link, or the neutral notice to the
    // holder of an address another account verified) are one transaction.
    added = await commitChange(deps, async (change) => {
      const { repositories } = change;
      const own = await repositories.emailAddresses.listForUser(input.user.id);
      if (own.some((address) => address.email === email)) throw new LatchkeyError('email_taken', ALREADY_YOURS, { param: 'email' });
      // Checked before the address is looked up elsewhere, so the limit says nothing about others.
      if (own.length >= max) throw new LatchkeyError('invalid_input', tooManyAddresses(max), { param: 'email' });
      let address: EmailAddress;
      try {
        address = await repositories.emailAddresses.add({ userId: input.user.id, email, verified: false, primary: false });
      } catch (error) {
        // A parallel add of the same address by this user won.
        if (isLatchkeyError(error, 'email_taken')) throw new LatchkeyError('email_taken', ALREADY_YOURS, { param: 'email' });
        throw error;
      }
      await change.record('email_added', input.user.id, input.client, { email });
      const verified = await repositories.emailAddresses.findVerified(email);
      const elsewhere = verified !== undefined && verified.userId !== input.user.id;
      if (!mayMail) return { elsewhere };
      if (elsewhere) return { elsewhere, mail: await change.queueMail(accountExistsNotice(deps, email, 'add', input.client)) };
      return { elsewhere, ...(await queueEmailConfirmation(deps, change, input.user, address, input.client)) };
    });
  } catch (error) {
    if (mayMail) await refundMailAttempt(deps, email, input.client);
    throw error;
  }
  const mailFailed = added.mail !== undefined && (await deliverMail(deps, added.mail)).status === 'failed';
  // The address stays listed, unverified, with a button to send the link again; the outbox retries this one.
  if (mailFailed) await refundMailAttempt(deps, email, input.client);
  if (added.elsewhere) return { email, mailFailed, ...unmailedCode(deps, email) };
  return { email, mailFailed, ...(!mailFailed && added.code !== undefined ? { code: added.code } : {}) };
}

/** Under verification by code, a code no mail carries (see AddressConfirmation); nothing otherwise. */
function unmailedCode(deps: LatchkeyDeps, email: string): { code?: MailedCodeState } {
  return deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED ? { code: unmailedVerificationCode(deps, email) } : {};
}

async function isVerifiedElsewhere(deps: LatchkeyDeps, address: EmailAddress): Promise<boolean> {
  const verified = await deps.store.emailAddresses.findVerified(address.email);
  return verified !== undefined && verified.userId !== address.userId;
}

/**
 * Sends the confirmation link for one of the user's unverified addresses again. It changes
 * nothing about the account, so it needs no recent reauthentication (the confirm_email limit
 * keeps it from flooding a mailbox).
 */
export async function resendEmailConfirmation(deps: LatchkeyDeps, input: ManageEmailInput): Promise<AddressConfirmation> {
  await deps.rateLimits.enforce('manage_email', { ip: input.client.ip, userId: input.user.id });
  const address = await ownAddress(deps, input);
  if (address.verified) throw new LatchkeyError('invalid_input', ALREADY_VERIFIED, { param: 'email' });
  if (await isVerifiedElsewhere(deps, address)) {
    // Answer as a send would, limit included, without mailing another account's address.
    const limit = await deps.rateLimits.consume('confirm_email', { ip: input.client.ip, key: address.email });
    if (!limit.allowed) throw new RateLimitedError('confirm_email', limit.retryAfterSeconds, WAIT_BEFORE_RESENDING);
    return { address, ...unmailedCode(deps, address.email) };
  }
  return { address, ...(await sendConfirmationAgain(deps, address, input.client)) };
}

export interface ResendLoginVerificationInput {
  /** The user whose login waits at the verify_email stage (the adapter's pending login). */
  userId: number;
  client: ClientInfo;
}

/**
 * Sends the confirmation link again to a user whose login waits for a verified address: to the
 * address the login stage mails (the primary one, else the first), while it is still unverified.
 * Returns the address mailed, or undefined when none needs it any more (it was verified meanwhile).
 */
export async function resendLoginVerification(deps: LatchkeyDeps, input: ResendLoginVerificationInput): Promise<AddressConfirmation | undefined> {
  const addresses = await deps.store.emailAddresses.listForUser(input.userId);
  if (addresses.some((address) => address.verified)) return undefined;
  const address = addresses.find((candidate) => candidate.primary) ?? addresses[0];
  if (!address) return undefined;
  return { address, ...(await sendConfirmationAgain(deps, address, input.client)) };
}

/**
 * Mails the link (or code) within the confirm_email limit: refused with 'rate_limited' (and how
 * long to wait) or 'mail_failed'. Returns the code's state when the mail carried one.
 */
async function sendConfirmationAgain(deps: LatchkeyDeps, address: EmailAddress, client: ClientInfo): Promise<{ code?: MailedCodeState }> {
  let mail;
  try {
    mail = await sendEmailConfirmation(deps, address, client);
  } catch (error) {
    if (!isLatchkeyError(error, 'mail_failed')) throw error;
    await refundMailAttempt(deps, address.email, client);
    // The mailer's own message names the mail server: for the log, not for the page.
    throw new LatchkeyError('mail_failed', 'We could not send an email to {email} just now. Please try again later.', { param: 'email', params: { email: address.email } });
  }
  if (!mail.sent) throw new RateLimitedError('confirm_email', Math.max(1, mail.retryAfterSeconds), WAIT_BEFORE_RESENDING);
  return mail.code === undefined ? {} : { code: mail.code };
}

/** Removes one of the user's addresses, never the primary one (the account's sign-in and mail address). */
export async function removeEmailAddress(deps: LatchkeyDeps, input: ChangeEmailInput): Promise<EmailAddress> {
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  await deps.rateLimits.enforce('manage_email', { ip: input.client.ip, userId: input.user.id });
  const chosen = await ownAddress(deps, input);
  const { removed, notice } = await commitChange(deps, async (change) => {
    const { repositories } = change;
    // Read again inside the transaction: a parallel "make primary" may have changed it.
    const current = await repositories.emailAddresses.findById(chosen.id);
    if (!current || current.userId !== input.user.id) throw new LatchkeyError('not_found', NOT_YOURS, { param: 'email' });
    if (current.primary) throw new LatchkeyError('invalid_input', CANNOT_REMOVE_PRIMARY, { param: 'email' });
    await repositories.emailAddresses.remove(current.id);
    await change.record('email_removed', input.user.id, input.client, { email: current.email });
    const primary = (await repositories.emailAddresses.listForUser(input.user.id)).find((address) => address.primary);
    const message = primary && addressNotice(deps, 'account/email/email_deleted', primary.email, mailLanguage(deps, input.user, input.client), { user: input.user, deleted_email: current.email });
    return { removed: current, notice: await change.queueMail(message) };
  });
  // Best effort: the removal stands whether or not the mail goes now; the outbox tries it again.
  await deliverMail(deps, notice);
  return removed;
}

/**
 * Makes a verified address the primary one (and so, in projects that sign in by email, the sign-in
 * address). The former primary address is told, so that a person whose session was taken over
 * learns of it at the address they know.
 */
export async function makePrimaryEmailAddress(deps: LatchkeyDeps, input: ChangeEmailInput): Promise<EmailAddress> {
  requireRecentAuthentication(deps, input.lastAuthenticatedAt);
  await deps.rateLimits.enforce('manage_email', { ip: input.client.ip, userId: input.user.id });
  const chosen = await ownAddress(deps, input);
  const made = await commitChange(deps, async (change) => {
    const { repositories } = change;
    const current = await repositories.emailAddresses.findById(chosen.id);
    if (!current || current.userId !== input.user.id) throw new LatchkeyError('not_found', NOT_YOURS, { param: 'email' });
    if (!current.verified) throw new LatchkeyError('invalid_input', PRIMARY_MUST_BE_VERIFIED, { param: 'email' });
    const previous = (await repositories.emailAddresses.listForUser(input.user.id)).find((address) => address.primary);
    if (previous?.id === current.id) return { address: current, notice: undefined };
    const address = await repositories.emailAddresses.setPrimary(input.user.id, current.id);
    if (!address) throw new LatchkeyError('not_found', NOT_YOURS, { param: 'email' });
    if (previous === undefined) return { address, notice: undefined };
    const moved = { from_email: previous.email, to_email: address.email };
    await change.record('email_changed', input.user.id, input.client, moved);
    return { address, notice: await change.queueMail(addressNotice(deps, 'account/email/email_changed', previous.email, mailLanguage(deps, input.user, input.client), { user: input.user, ...moved })) };
  });
  // Best effort, as a removal's notice.
  await deliverMail(deps, made.notice);
  return made.address;
}

async function ownAddress(deps: LatchkeyDeps, input: ManageEmailInput): Promise<EmailAddress> {
  const email = tryNormalizeEmail(input.email);
  const address = email === undefined ? undefined : await deps.store.emailAddresses.findForUser(input.user.id, email);
  if (!address) throw new LatchkeyError('not_found', NOT_YOURS, { param: 'email' });
  return address;
}

/**
 * A notice about a change of the account's addresses, queued with the change. It is best effort:
 * the change stands whether or not the mail goes out at once, and a mail server that is down must
 * not turn a completed change into an error (the outbox tries it again).
 */
function addressNotice(deps: LatchkeyDeps, template: string, to: string, language: string, context: Record<string, unknown>): EmailMessage {
  return renderAccountEmail(deps, { template, to, language, context });
}
