import { constantTimeEqual, keyedHash } from '../../core/crypto.js';
import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { User } from '../model.js';
import { mailLanguage, sendAccountEmail } from '../emails.js';
import { forgetLoginFailures } from '../credentials.js';
import type { ClientInfo } from '../../core/client.js';
import { tryNormalizeEmail } from '../../core/identifiers.js';
import { accountUrl } from '../urls.js';
import {
  checkNewPassword,
  replacePassword,
  requiredField,
  type MailOutcome,
  type NewPasswordInput,
  type PasswordChangeResult,
} from './password-change.js';
import { msgid } from '../../core/i18n/message.js';

const PURPOSE = 'password-reset';
export const INVALID_RESET_KEY = msgid('The password reset link was invalid, possibly because it has already been used. Please request a new password reset.');

/** `<user id base 36>-<seconds since the epoch base 36>-<HMAC, 43 base64url characters>`. */
const KEY_PATTERN = /^([0-9a-z]{1,11})-([0-9a-z]{1,9})-([A-Za-z0-9_-]{43})$/;

/**
 * The HMAC of a reset key, as Django's PasswordResetTokenGenerator: over everything whose change
 * must kill the key. A new password (the hash changes, so a key works once), a later login
 * (last_login changes: whoever used the account since the mail was sent voids it) and a new
 * primary email (the mailbox the key went to no longer owns the account) all void it, with
 * nothing stored. The fields go in as a JSON array so that no two states can run together.
 */
function keyHmac(deps: Pick<LatchkeyDeps, 'settings'>, user: User, timestamp: number): string {
  const state = JSON.stringify([user.id, user.password, user.lastLogin?.getTime() ?? null, timestamp, user.email]);
  return keyedHash(deps.settings.SECRET_KEY, PURPOSE, state);
}

export function makePasswordResetKey(deps: Pick<LatchkeyDeps, 'settings' | 'clock'>, user: User): string {
  const timestamp = Math.floor(deps.clock.now().getTime() / 1000);
  return `${user.id.toString(36)}-${timestamp.toString(36)}-${keyHmac(deps, user, timestamp)}`;
}

/** The account part of a well-formed key (its user id in base 36), without checking the key. */
export function resetKeyAccount(key: string): string | undefined {
  return KEY_PATTERN.exec(key)?.[1];
}

/**
 * The active user a reset key was made for, or undefined for anything else: a malformed or forged
 * key, one older than ACCOUNT_PASSWORD_RESET_TIMEOUT (valid at the timeout, refused a second
 * after), or one the account has changed under since it was made.
 */
export async function userForResetKey(deps: Pick<LatchkeyDeps, 'settings' | 'clock' | 'store'>, key: unknown): Promise<User | undefined> {
  if (typeof key !== 'string') return undefined;
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  const [, id36 = '', time36 = '', hmac = ''] = match;
  const timestamp = parseInt(time36, 36);
  const age = Math.floor(deps.clock.now().getTime() / 1000) - timestamp;
  if (age > deps.settings.ACCOUNT_PASSWORD_RESET_TIMEOUT) return undefined;
  const user = await deps.store.users.findById(parseInt(id36, 36));
  if (!user?.isActive) return undefined;
  return constantTimeEqual(hmac, keyHmac(deps, user, timestamp)) ? user : undefined;
}

export interface PasswordResetRequest {
  email: string;
  client: ClientInfo;
}

export interface PasswordResetRequested {
  /**
   * Settles once every mail was handed over or failed; never rejects. Adapters do not wait for
   * it: the answer must not depend on whether an account exists, so it cannot wait for a mail
   * that only an account gets, nor for an SMTP server that only it talks to.
   */
  delivery: Promise<MailOutcome[]>;
}

/**
 * The accounts a reset for `email` (normalized) reaches, each with the stored address to mail. As
 * allauth's filter_users_by_email with prefer_verified: the users who verified the address, else
 * those for whom it is the primary address. An address someone merely added, unverified, as a
 * second address gets nothing.
 */
async function accountsForAddress(deps: Pick<LatchkeyDeps, 'store'>, email: string): Promise<{ user: User; to: string }[]> {
  const rows = await deps.store.emailAddresses.listByEmail(email);
  const verified = rows.filter((row) => row.verified);
  const chosen = verified.length > 0 ? verified : rows.filter((row) => row.primary);
  const accounts: { user: User; to: string }[] = [];
  for (const row of chosen) {
    const user = await deps.store.users.findById(row.userId);
    if (user?.isActive && !accounts.some((account) => account.user.id === user.id)) accounts.push({ user, to: row.email });
  }
  if (rows.length === 0) {
    // An account whose address never got a row (imported, say) is reached through its email column.
    const user = await deps.store.users.findByEmail(email);
    if (user?.isActive && user.email !== '') accounts.push({ user, to: user.email });
  }
  return accounts;
}

async function mailResetKey(deps: LatchkeyDeps, user: User, to: string, client: ClientInfo): Promise<MailOutcome> {
  try {
    const key = makePasswordResetKey(deps, user);
    await sendAccountEmail(deps, {
      template: 'account/email/password_reset_key',
      to,
      language: mailLanguage(deps, user, client),
      // The link comes from settings, never from the request's Host or X-Forwarded-Host: a poisoned
      // header must not send the key to a host the attacker owns.
      context: { user, username: user.username, password_reset_url: accountUrl(deps.settings, 'account_reset_password_from_key', key) },
    });
    return { status: 'sent' };
  } catch (error) {
    return { status: 'failed', error };
  }
}

/**
 * Mails a reset link to each account the address reaches, and nothing to anyone else. The caller
 * learns nothing about which happened: the same return whether the address has an account or not,
 * and whether or not the mail could be sent.
 *
 * The mail goes to the stored address, never to the typed one: a variant that normalizes to a
 * stored address (case, fullwidth letters) reaches it; anything that does not normalize cleanly
 * (a comma list, a quoted local part, a dotless ı, a homoglyph '@') is refused as invalid, which
 * depends on the input alone and so reveals nothing.
 */
export async function requestPasswordReset(deps: LatchkeyDeps, input: PasswordResetRequest): Promise<PasswordResetRequested> {
  if (input.email.trim() === '') throw requiredField('email');
  const email = tryNormalizeEmail(input.email);
  // Counted per IP and per address before anything else, so the limit holds for known and
  // unknown addresses alike and a mailbox cannot be flooded.
  await deps.rateLimits.enforce('reset_password', email === undefined ? { ip: input.client.ip } : { ip: input.client.ip, key: email });
  if (email === undefined) throw new LatchkeyError('invalid_email', 'Enter a valid email address.', { param: 'email' });
  // Everything that depends on whether the address has an account (the lookup, the key, the
  // templates, the mail) happens after the caller has answered, so the answer's timing cannot
  // tell a known address from an unknown one.
  const delivery = deps.background.run(async () => {
    const accounts = await accountsForAddress(deps, email);
    return Promise.all(accounts.map(({ user, to }) => mailResetKey(deps, user, to, input.client)));
  });
  return { delivery };
}

export interface ResetPasswordInput extends NewPasswordInput {
  key: unknown;
  client: ClientInfo;
}

/**
 * Sets a new password with a mailed key. The swap is conditional on the hash the key was made
 * from, so of two submissions of one key exactly one succeeds, even when they race. Every session of the
 * account ends, and nobody is logged in: an account with MFA must still pass it to get in.
 */
export async function resetPasswordWithKey(deps: LatchkeyDeps, input: ResetPasswordInput): Promise<PasswordChangeResult> {
  await deps.rateLimits.enforce('reset_password_from_key', { ip: input.client.ip });
  const user = await userForResetKey(deps, input.key);
  if (!user) throw new LatchkeyError('invalid_key', INVALID_RESET_KEY);
  await checkNewPassword(deps, user, input);
  const encoded = await deps.passwords.hash(input.password1);
  const result = await replacePassword(deps, { user, encoded, what: 'password_reset', client: input.client });
  if (!result) throw new LatchkeyError('invalid_key', INVALID_RESET_KEY);
  // The mailbox is proved and the old password is gone: failures counted against it (a stranger
  // who filled the account's daily limit, say) no longer hold the owner back.
  await forgetLoginFailures(deps, user, input.client);
  return result;
}
