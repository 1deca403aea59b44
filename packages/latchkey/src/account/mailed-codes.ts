import { randomInt } from 'node:crypto';
import type { Settings } from '../config/settings.js';
import { constantTimeEqual, keyedHash, randomToken } from '../core/crypto.js';
import type { LatchkeyDeps } from '../deps.js';
import { mailLanguage, sendAccountEmail } from './emails.js';
import type { User } from './model.js';
import type { ClientInfo } from '../core/client.js';
import { msgid } from '../core/i18n/message.js';

/**
 * The short codes Latchkey mails (allauth's "code verification processes"): a sign-in code, a
 * code asked for after the password (ACCOUNT_LOGIN_BY_CODE_REQUIRED), a code that verifies an
 * address. All of them work the same way, written once here:
 * - the client that asked keeps the code's state in its own session, which is what binds the code
 *   to it; the state holds a keyed hash of the code, never the code, so a leaked session store
 *   does not hand out working codes;
 * - each check takes one of MAX_ATTEMPTS attempt slots, one-time claims shared by every instance,
 *   so parallel guesses cannot all read "no attempt so far"; a right code is claimed once more as
 *   used, so it works a single time;
 * - a code lives TIMEOUT seconds on the site's clock.
 */

/** allauth's code alphabet: capitals and digits without the look-alikes 0/O and 1/I. */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 6;

export const INCORRECT_CODE = msgid('Incorrect code.');

/** What a client keeps of a mailed code. */
export interface MailedCodeState {
  /** A random id naming this code in the one-time claims (attempt slots, the one use). */
  id: string;
  /** The address the code went (or, for an unknown address, would have gone) to. */
  email: string;
  codeHash: string;
  expiresAt: string;
  /** Wrong codes given so far (informative: the claims are what enforce the limit). */
  attempts: number;
}

/** Which kind of code, and its limits: the kind keeps one kind's hashes and claims apart from another's. */
export interface MailedCodePolicy {
  purpose: 'login-code' | 'email-verification-code';
  maxAttempts: number;
  timeoutSeconds: number;
}

export function loginCodePolicy(settings: Settings): MailedCodePolicy {
  return { purpose: 'login-code', maxAttempts: settings.ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS, timeoutSeconds: settings.ACCOUNT_LOGIN_BY_CODE_TIMEOUT };
}

export function emailVerificationCodePolicy(settings: Settings): MailedCodePolicy {
  return {
    purpose: 'email-verification-code',
    maxAttempts: settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS,
    timeoutSeconds: settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT,
  };
}

/** The code's lifetime in whole minutes, as the mails state it. */
export function codeMinutes(policy: MailedCodePolicy): number {
  return Math.max(1, Math.round(policy.timeoutSeconds / 60));
}

export type MailedCodeCheck =
  | { status: 'right' }
  /** A wrong code; `state` is the state to keep, or undefined once the attempts are used up. */
  | { status: 'incorrect'; state: MailedCodeState | undefined }
  /** The code has expired, was used already or its attempts are gone: the client must ask anew. */
  | { status: 'expired' };

function generateCode(): string {
  let code = '';
  for (let index = 0; index < CODE_LENGTH; index += 1) code += CODE_ALPHABET.charAt(randomInt(CODE_ALPHABET.length));
  return code;
}

/** People type codes in lower case, with spaces or a dash in the middle: none of that matters. */
function normalizeCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

function hashCode(deps: Pick<LatchkeyDeps, 'settings'>, policy: MailedCodePolicy, id: string, code: string): string {
  return keyedHash(deps.settings.SECRET_KEY, policy.purpose, `${id}|${code}`);
}

/** A new code for `email`: the state for the client to keep, and the code for the mail (only). */
export function issueMailedCode(deps: Pick<LatchkeyDeps, 'settings' | 'clock'>, policy: MailedCodePolicy, email: string): { state: MailedCodeState; code: string } {
  const code = generateCode();
  const id = randomToken(18);
  const expiresAt = new Date(deps.clock.now().getTime() + policy.timeoutSeconds * 1000).toISOString();
  return { state: { id, email, codeHash: hashCode(deps, policy, id, code), expiresAt, attempts: 0 }, code };
}

/** Whether the state can still take a code (its client keeps it no longer than that). */
export function mailedCodeIsLive(deps: Pick<LatchkeyDeps, 'clock'>, state: MailedCodeState): boolean {
  return new Date(state.expiresAt).getTime() > deps.clock.now().getTime();
}

/** Takes one attempt slot of this code; the slot's number, or undefined when none is left. */
async function claimAttempt(deps: Pick<LatchkeyDeps, 'oneTimeClaims' | 'clock'>, policy: MailedCodePolicy, state: MailedCodeState): Promise<number | undefined> {
  for (let slot = Math.max(0, state.attempts); slot < policy.maxAttempts; slot += 1) {
    if (await deps.oneTimeClaims.claim(`${policy.purpose}:${state.id}:attempt:${slot}`, policy.timeoutSeconds, deps.clock.now())) return slot;
  }
  return undefined;
}

/**
 * Checks a code against the client's state: expired or out of attempts first, then one attempt
 * slot is taken and the code compared in constant time; a right code is then claimed as used,
 * unless `use` is false (a look before the real answer: it still takes an attempt slot).
 */
export async function checkMailedCode(
  deps: Pick<LatchkeyDeps, 'settings' | 'clock' | 'oneTimeClaims'>,
  policy: MailedCodePolicy,
  state: MailedCodeState,
  code: string,
  options: { use?: boolean } = {},
): Promise<MailedCodeCheck> {
  if (!mailedCodeIsLive(deps, state)) return { status: 'expired' };
  const slot = await claimAttempt(deps, policy, state);
  if (slot === undefined) return { status: 'expired' };
  if (!constantTimeEqual(hashCode(deps, policy, state.id, normalizeCode(code)), state.codeHash)) {
    const attempts = slot + 1;
    return { status: 'incorrect', state: attempts >= policy.maxAttempts ? undefined : { ...state, attempts } };
  }
  // A look only: the code stays usable (the state that holds it is dropped once it is used).
  if (options.use === false) return { status: 'right' };
  if (!(await deps.oneTimeClaims.claim(`${policy.purpose}:${state.id}:used`, policy.timeoutSeconds, deps.clock.now()))) return { status: 'expired' };
  return { status: 'right' };
}

/**
 * The sign-in code mail, to `email` of `user`: for a login by code, and for the code the
 * login_by_code stage asks for after another first factor (ACCOUNT_LOGIN_BY_CODE_REQUIRED).
 */
export async function sendLoginCodeMail(
  deps: Pick<LatchkeyDeps, 'settings' | 'mailer' | 'templates' | 'adapter' | 'catalogs'>,
  user: User,
  email: string,
  code: string,
  client: Pick<ClientInfo, 'language'>,
): Promise<void> {
  const minutes = codeMinutes(loginCodePolicy(deps.settings));
  await sendAccountEmail(deps, { template: 'account/email/login_code', to: email, language: mailLanguage(deps, user, client), context: { user, username: user.username, code, minutes } });
}
