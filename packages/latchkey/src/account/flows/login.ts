import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { User } from '../../storage/ports.js';
import { findUserByLogin, verifyCredentials } from '../credentials.js';
import { sendEmailConfirmation } from '../email-confirmation.js';
import type { ClientInfo } from '../events.js';
import { normalizeUsernameKey } from '../identifiers.js';

/**
 * Login is a pipeline: credentials (a password here; a provider in the social issue), then the
 * stages below, then done. Every entry point (pages, headless API, token API, admin, social)
 * goes through `runLoginStages`, so none can skip one. The MFA issue adds its stage here.
 */
export type LoginStage = 'verify_email';

export type LoginResult =
  | { status: 'authenticated'; user: User }
  /** The account exists and the password was right, but a stage stops the login. */
  | { status: 'stopped'; stage: LoginStage; user: User }
  | { status: 'inactive'; user: User };

export const INVALID_CREDENTIALS = 'The username and/or password you specified are not correct.';
export const TOO_MANY_ATTEMPTS = 'Too many failed login attempts. Try again later.';

export interface PasswordLoginInput {
  login: string;
  password: string;
  client: ClientInfo;
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
  if (!attempt.allowed) throw new LatchkeyError('rate_limited', TOO_MANY_ATTEMPTS);
  const failures = await deps.rateLimits.consume('login_failed', subject);
  if (!failures.allowed) throw new LatchkeyError('rate_limited', TOO_MANY_ATTEMPTS);

  const user = await verifyCredentials(deps, { login: input.login, password: input.password });
  if (!user) throw new LatchkeyError('invalid_credentials', INVALID_CREDENTIALS);
  await deps.rateLimits.refund('login_failed', subject);
  if (!user.isActive) return { status: 'inactive', user };
  return runLoginStages(deps, user, input.client);
}

/**
 * The stages after the credentials. Mandatory verification stops a login until an address is
 * verified, and sends the confirmation again (within the confirm_email limit).
 */
export async function runLoginStages(deps: LatchkeyDeps, user: User, client: ClientInfo): Promise<LoginResult> {
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION === 'mandatory') {
    const addresses = await deps.store.emailAddresses.listForUser(user.id);
    if (!addresses.some((address) => address.verified)) {
      const primary = addresses.find((address) => address.primary) ?? addresses[0];
      if (primary) await sendEmailConfirmation(deps, primary, client).catch(() => false);
      return { status: 'stopped', stage: 'verify_email', user };
    }
  }
  return { status: 'authenticated', user };
}

/**
 * Carries on a login that stopped at a stage, for the same browser (the adapter keeps the pending
 * state): the account is read again, so one deactivated meanwhile gets no further, and every stage
 * runs again from the start, so none can be skipped.
 */
export async function continueLogin(deps: LatchkeyDeps, userId: number, client: ClientInfo): Promise<LoginResult | undefined> {
  const user = await deps.store.users.findById(userId);
  if (!user) return undefined;
  if (!user.isActive) return { status: 'inactive', user };
  return runLoginStages(deps, user, client);
}

/** Records a completed login; the adapter has created the new session. */
export async function recordLogin(deps: LatchkeyDeps, user: User, client: ClientInfo, method: string): Promise<void> {
  await deps.events.emit('user_logged_in', user.id, client, { method });
}
