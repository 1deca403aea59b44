import { constantTimeEqual, keyedHash } from '../../core/crypto.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { User } from '../model.js';
import { findUserByLogin, INVALID_CREDENTIALS, TOO_MANY_ATTEMPTS, verifyCredentials } from '../credentials.js';
import { sendEmailConfirmation } from '../email-confirmation.js';
import type { ClientInfo } from '../../core/client.js';
import { normalizeUsernameKey } from '../../core/identifiers.js';
import { hasSecondFactor } from '../../mfa/authenticators.js';
import { checkLoginCode } from '../../mfa/flows/authenticate.js';
import { isTrustedBrowser } from '../../mfa/trust.js';

/**
 * Login is a pipeline: credentials (a password here; a provider in the social issue), then the
 * stages below, in this order, then done. Every entry point (pages, headless API, token API,
 * admin, social) goes through `runLoginStages`, so none can skip one, and no session exists
 * until every stage has passed: a login stopped at a stage is only a pending state the adapter
 * keeps (for the pages, in the browser's anonymous session).
 */
export const LOGIN_STAGES = ['verify_email', 'mfa_authenticate'] as const;
export type LoginStage = (typeof LOGIN_STAGES)[number];

export type LoginResult =
  | { status: 'authenticated'; user: User; method: LoginMethod }
  /** The account exists and the password was right, but a stage stops the login. */
  | { status: 'stopped'; stage: LoginStage; user: User; pending: PendingLoginState }
  | { status: 'inactive'; user: User };


/**
 * What an adapter keeps of a login stopped at a stage, to carry it on later: the user, and a mark
 * of the credentials the login proved (a keyed hash of the stored password hash). A password
 * change or reset meanwhile changes the mark, so a browser that passed the old password can no
 * longer finish the login, not even with a right code.
 */
export interface PendingLoginState {
  userId: number;
  credentialMark: string;
}

export function pendingLoginState(deps: Pick<LatchkeyDeps, 'settings'>, user: User): PendingLoginState {
  return { userId: user.id, credentialMark: keyedHash(deps.settings.SECRET_KEY, 'pending-login', `${user.id}|${user.password}`) };
}

/** How the login proved who the person is (recorded with user_logged_in). */
export type LoginMethod = 'password' | 'password+totp' | 'password+recovery_codes' | 'password+trusted_browser';

/** What an entry point passes along besides the client: the browser's "trust" cookie, if any. */
export interface LoginContext {
  client: ClientInfo;
  /** The MFA trust cookie the browser sent (mfa/trust.ts); ignored unless MFA_TRUST_ENABLED. */
  mfaTrustToken?: string | undefined;
}

export interface PasswordLoginInput extends LoginContext {
  login: string;
  password: string;
}

/**
 * The rate-limit key of a login attempt: the account it names when there is one, so that its
 * username, its email and every case, width or NFKC variant of either count against one account
 * (item 5); otherwise the folded identifier itself. The lookup costs no hash.
 */
async function loginKey(deps: LatchkeyDeps, login: string): Promise<string> {
  const user = await findUserByLogin(deps, login);
  return user ? `user:${user.id}` : `login:${normalizeUsernameKey(login.trim())}`;
}

/**
 * The password login. Failures are counted per IP and per account identifier before the password
 * is checked, so parallel guesses can never get past the limit; a success takes its own count
 * back (and only its own: the IP's earlier failures stay). Every refusal of the credentials reads
 * the same, whether the account is unknown, the password wrong, or the account has no password.
 */
export async function loginWithPassword(deps: LatchkeyDeps, input: PasswordLoginInput): Promise<LoginResult> {
  if (input.login.trim() === '' || input.password === '') {
    throw new LatchkeyError('invalid_credentials', INVALID_CREDENTIALS);
  }
  const subject = { ip: input.client.ip, key: await loginKey(deps, input.login) };
  const attempt = await deps.rateLimits.consume('login', { ip: input.client.ip });
  if (!attempt.allowed) throw new RateLimitedError('login', attempt.retryAfterSeconds, TOO_MANY_ATTEMPTS);
  const failures = await deps.rateLimits.consume('login_failed', subject);
  if (!failures.allowed) throw new RateLimitedError('login_failed', failures.retryAfterSeconds, TOO_MANY_ATTEMPTS);

  const user = await verifyCredentials(deps, { login: input.login, password: input.password });
  if (!user) throw new LatchkeyError('invalid_credentials', INVALID_CREDENTIALS);
  await deps.rateLimits.refund('login_failed', subject);
  if (!user.isActive) return { status: 'inactive', user };
  return runLoginStages(deps, user, input);
}

/**
 * The stages after the credentials. Mandatory verification stops a login until an address is
 * verified, and sends the confirmation again (within the confirm_email limit). A user with an
 * authenticator app must then give a code, unless this browser is trusted for them.
 */
export async function runLoginStages(deps: LatchkeyDeps, user: User, context: LoginContext): Promise<LoginResult> {
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION === 'mandatory') {
    const addresses = await deps.store.emailAddresses.listForUser(user.id);
    if (!addresses.some((address) => address.verified)) {
      const primary = addresses.find((address) => address.primary) ?? addresses[0];
      // A mail that cannot go out now does not change the answer (the login resends it next time);
      // anything else (the database) is a real failure.
      if (primary) {
        try {
          await sendEmailConfirmation(deps, primary, context.client);
        } catch (error) {
          if (!isLatchkeyError(error, 'mail_failed')) throw error;
        }
      }
      return { status: 'stopped', stage: 'verify_email', user, pending: pendingLoginState(deps, user) };
    }
  }
  const authenticators = await deps.store.authenticators.listForUser(user.id);
  if (hasSecondFactor(authenticators)) {
    if (!isTrustedBrowser(deps, user, authenticators, context.mfaTrustToken)) {
      return { status: 'stopped', stage: 'mfa_authenticate', user, pending: pendingLoginState(deps, user) };
    }
    return { status: 'authenticated', user, method: 'password+trusted_browser' };
  }
  return { status: 'authenticated', user, method: 'password' };
}

/**
 * Carries on a login that stopped at a stage, for the same client (the adapter keeps the pending
 * state): the account is read again, so one deactivated meanwhile gets no further, one whose
 * password changed meanwhile not at all (undefined: the login is gone), and every stage runs
 * again from the start, so none can be skipped.
 */
export async function continueLogin(deps: LatchkeyDeps, pending: PendingLoginState, context: LoginContext): Promise<LoginResult | undefined> {
  const user = await deps.store.users.findById(pending.userId);
  if (!user || !constantTimeEqual(pending.credentialMark, pendingLoginState(deps, user).credentialMark)) return undefined;
  if (!user.isActive) return { status: 'inactive', user };
  return runLoginStages(deps, user, context);
}

/**
 * The login's second step: a login that stopped for a code carries on with one. The stages
 * before it run again first (so the code is neither asked for nor used up when an earlier stage
 * now stops the login); then the code must be right. MFA is the last stage: a right code
 * completes the login. Throws 'incorrect_code' or 'rate_limited' (checkLoginCode).
 */
export async function continueLoginWithCode(deps: LatchkeyDeps, pending: PendingLoginState, code: string, context: LoginContext): Promise<LoginResult | undefined> {
  const result = await continueLogin(deps, pending, { client: context.client });
  if (result?.status !== 'stopped' || result.stage !== 'mfa_authenticate') return result;
  const type = await checkLoginCode(deps, result.user, code, context.client);
  return { status: 'authenticated', user: result.user, method: `password+${type}` };
}

/**
 * The account of a login that has passed every stage but that an adapter held back for one last
 * question before the session is created (the headless browser client's "trust this browser?").
 * The account is read again, with the same checks as continueLogin: a password changed or reset
 * meanwhile ends the login (the mark no longer matches), and so does a deactivation. The stages
 * are not run again: they have passed, and the code that passed the last one is used up.
 * Returns the user the login may complete for, or undefined when it may not.
 */
export async function userOfPassedLogin(deps: LatchkeyDeps, pending: PendingLoginState): Promise<User | undefined> {
  const user = await deps.store.users.findById(pending.userId);
  if (!user || !constantTimeEqual(pending.credentialMark, pendingLoginState(deps, user).credentialMark)) return undefined;
  return user.isActive ? user : undefined;
}

/** Records a completed login; the adapter has created the new session. */
export async function recordLogin(deps: LatchkeyDeps, user: User, client: ClientInfo, method: LoginMethod): Promise<void> {
  await deps.events.emit('user_logged_in', user.id, client, { method });
}
