import { findUserByLogin } from '../account/credentials.js';
import { voidOtherClaims } from '../account/email-confirmation.js';
import { sendAccountEmail, type MailOutcome } from '../account/emails.js';
import type { User } from '../account/model.js';
import type { ClientInfo } from '../core/client.js';
import { constantTimeEqual, keyedHash, randomToken } from '../core/crypto.js';
import { LatchkeyError } from '../core/errors.js';
import { tryNormalizeEmail } from '../core/identifiers.js';
import { randomInt } from 'node:crypto';
import type { LatchkeyDeps } from '../deps.js';
import { beginLogin, type LoginResult } from './pipeline.js';
import type { LoginContext } from './stages.js';

/**
 * Login by a mailed code (ACCOUNT_LOGIN_BY_CODE_ENABLED), as allauth's: the person gives an
 * address, a short code goes to it, and the code typed back into the same client is the login's
 * first factor (`email_code`), after which the pipeline's stages run as for any other login, MFA
 * included. The pages and the headless API both call this module and keep its state in the
 * client's session, which is what binds the code to the client that asked for it.
 */

/** allauth's code alphabet: capitals and digits without the look-alikes 0/O and 1/I. */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 6;
export const INCORRECT_LOGIN_CODE = 'Incorrect code.';

/**
 * What a client keeps of a requested code: never the code itself, only its keyed hash, so that a
 * leaked session store does not hand out working codes. The state looks the same whether or not
 * the address has an account, because nothing about the account is decided when it is made.
 */
export interface LoginCodeState {
  /** A random id naming this request in the one-time claims (attempt slots, the one use). */
  id: string;
  email: string;
  codeHash: string;
  expiresAt: string;
  /** Wrong codes given so far (informative: the claims are what enforce the limit). */
  attempts: number;
}

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

function generateCode(): string {
  let code = '';
  for (let index = 0; index < CODE_LENGTH; index += 1) code += CODE_ALPHABET.charAt(randomInt(CODE_ALPHABET.length));
  return code;
}

/** People type codes in lower case, with spaces or a dash in the middle: none of that matters. */
function normalizeCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

function hashCode(deps: Pick<LatchkeyDeps, 'settings'>, id: string, code: string): string {
  return keyedHash(deps.settings.SECRET_KEY, 'login-code', `${id}|${code}`);
}

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

async function mailCode(deps: LatchkeyDeps, email: string, code: string): Promise<MailOutcome> {
  try {
    const user = await accountFor(deps, email);
    // An unknown address gets nothing: there is no "unknown account" mail (no such setting here).
    if (!user) return { status: 'skipped' };
    const minutes = Math.max(1, Math.round(deps.settings.ACCOUNT_LOGIN_BY_CODE_TIMEOUT / 60));
    await sendAccountEmail(deps, { template: 'account/email/login_code', to: email, context: { user, username: user.username, code, minutes } });
    return { status: 'sent' };
  } catch (error) {
    return { status: 'failed', error };
  }
}

/**
 * Starts a login by code for `email`. The request is limited per IP and per address
 * (request_login_code) before anything else, so known and unknown addresses count alike and a
 * mailbox cannot be flooded; the account lookup and the mail happen after the caller has
 * answered, so neither the answer nor its timing tells whether the address has an account.
 */
export async function requestLoginCode(deps: LatchkeyDeps, input: { email: string; client: ClientInfo }): Promise<LoginCodeRequested> {
  if (input.email.trim() === '') throw new LatchkeyError('invalid_input', 'This field is required.', { param: 'email', reason: 'required' });
  const email = tryNormalizeEmail(input.email);
  await deps.rateLimits.enforce('request_login_code', email === undefined ? { ip: input.client.ip } : { ip: input.client.ip, key: email });
  if (email === undefined) throw new LatchkeyError('invalid_email', 'Enter a valid email address.', { param: 'email' });
  const code = generateCode();
  const id = randomToken(18);
  const expiresAt = new Date(deps.clock.now().getTime() + deps.settings.ACCOUNT_LOGIN_BY_CODE_TIMEOUT * 1000).toISOString();
  const state: LoginCodeState = { id, email, codeHash: hashCode(deps, id, code), expiresAt, attempts: 0 };
  return { state, delivery: deps.background.run(() => mailCode(deps, email, code)) };
}

/** Whether the state can still take a code (it is kept no longer than its code lives). */
export function loginCodeIsLive(deps: Pick<LatchkeyDeps, 'clock'>, state: LoginCodeState): boolean {
  return new Date(state.expiresAt).getTime() > deps.clock.now().getTime();
}

/**
 * Takes one attempt slot of this request. The slots are one-time claims, shared by every instance,
 * so parallel guesses sent with one session cannot all read "0 attempts so far" and get past
 * ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS. Returns the slot's number, or undefined when none is left.
 */
async function claimAttempt(deps: LatchkeyDeps, state: LoginCodeState): Promise<number | undefined> {
  const max = deps.settings.ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS;
  const ttl = deps.settings.ACCOUNT_LOGIN_BY_CODE_TIMEOUT;
  for (let slot = state.attempts; slot < max; slot += 1) {
    if (await deps.oneTimeClaims.claim(`login-code:${state.id}:attempt:${slot}`, ttl, deps.clock.now())) return slot;
  }
  return undefined;
}

/**
 * A code login proves the person reads mail at the address: as allauth does, the address is
 * marked verified (and other accounts' unverified claims to it lapse, as with a confirmation link).
 */
async function markAddressVerified(deps: LatchkeyDeps, user: User, email: string, client: ClientInfo): Promise<void> {
  const address = await deps.store.emailAddresses.findForUser(user.id, email);
  if (!address || address.verified) return;
  const verified = await deps.store.transaction(async (repositories) => {
    const marked = await repositories.emailAddresses.markVerified(address.id);
    if (marked) await voidOtherClaims(repositories, marked);
    return marked;
  });
  if (verified) await deps.events.emit('email_confirmed', user.id, client, { email: verified.email, by: 'login_code' });
}

/**
 * Checks a code against the client's state. A wrong code uses one of the MAX_ATTEMPTS tries, and
 * the last one drops the login; a right one is used once (a claim), then the account's login
 * begins with the `email_code` first factor, so verification and MFA stages still apply.
 */
export async function confirmLoginCode(deps: LatchkeyDeps, state: LoginCodeState, input: LoginContext & { code: string }): Promise<LoginCodeConfirmation> {
  const { code, ...context } = input;
  if (!loginCodeIsLive(deps, state)) return { status: 'expired' };
  const slot = await claimAttempt(deps, state);
  if (slot === undefined) return { status: 'expired' };
  if (!constantTimeEqual(hashCode(deps, state.id, normalizeCode(code)), state.codeHash)) {
    const attempts = slot + 1;
    return { status: 'incorrect', state: attempts >= deps.settings.ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS ? undefined : { ...state, attempts } };
  }
  if (!(await deps.oneTimeClaims.claim(`login-code:${state.id}:used`, deps.settings.ACCOUNT_LOGIN_BY_CODE_TIMEOUT, deps.clock.now()))) return { status: 'expired' };
  const user = await accountFor(deps, state.email);
  // The account went away (or was deactivated) after the code was mailed: nothing to sign in to.
  if (!user) return { status: 'incorrect', state: undefined };
  await markAddressVerified(deps, user, state.email, context.client);
  const fresh = (await deps.store.users.findById(user.id)) ?? user;
  return { status: 'login', result: await beginLogin(deps, fresh, { kind: 'email_code', email: state.email }, context) };
}
