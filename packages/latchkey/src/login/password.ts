import { findUserByLogin, INVALID_CREDENTIALS, TOO_MANY_ATTEMPTS, verifyCredentials } from '../account/credentials.js';
import { LatchkeyError } from '../core/errors.js';
import { normalizeUsernameKey } from '../core/identifiers.js';
import { RateLimitedError } from '../core/rate-limit/index.js';
import type { LatchkeyDeps } from '../deps.js';
import { beginLogin, type LoginResult } from './pipeline.js';
import type { FirstFactor } from './proofs.js';
import type { LoginContext } from './stages.js';

export interface PasswordLoginInput extends LoginContext {
  login: string;
  password: string;
}

/**
 * The rate-limit key of a login attempt: the account it names when there is one, so that its
 * username, its email and every case, width or NFKC variant of either count against one account
 * (one account cannot be guessed at under several spellings); otherwise the folded identifier
 * itself. The lookup costs no hash.
 */
async function loginKey(deps: LatchkeyDeps, login: string): Promise<string> {
  const user = await findUserByLogin(deps, login);
  return user ? `user:${user.id}` : `login:${normalizeUsernameKey(login.trim())}`;
}

/**
 * The password as a login's first factor (the login forms, the headless API, the token API, and
 * the admin's own form, which says so in `firstFactor`). Failures are counted per IP and per
 * account identifier before the password is checked, so parallel guesses can never get past the
 * limit; a success takes its own count back (and only its own: the IP's earlier failures stay).
 * Every refusal of the credentials reads the same, whether the account is unknown, the password
 * wrong, or the account has no password.
 */
export async function loginWithPassword(deps: LatchkeyDeps, input: PasswordLoginInput, firstFactor: FirstFactor = { kind: 'password' }): Promise<LoginResult> {
  const { login, password, ...context } = input;
  if (login.trim() === '' || password === '') {
    throw new LatchkeyError('invalid_credentials', INVALID_CREDENTIALS);
  }
  const subject = { ip: context.client.ip, key: await loginKey(deps, login) };
  // Both limits are counted, and a refusal names the longest wait of those that refuse: the IP's
  // minute may end in two seconds while the account stays locked for minutes, and a client told
  // to come back in two seconds would only be refused again.
  const [attempt, failures] = await Promise.all([deps.rateLimits.consume('login', { ip: context.client.ip }), deps.rateLimits.consume('login_failed', subject)]);
  const longest = [{ action: 'login' as const, ...attempt }, { action: 'login_failed' as const, ...failures }]
    .filter((decision) => !decision.allowed)
    .sort((a, b) => b.retryAfterSeconds - a.retryAfterSeconds)[0];
  if (longest) throw new RateLimitedError(longest.action, longest.retryAfterSeconds, TOO_MANY_ATTEMPTS);

  const user = await verifyCredentials(deps, { login, password });
  if (!user) throw new LatchkeyError('invalid_credentials', INVALID_CREDENTIALS);
  await deps.rateLimits.refund('login_failed', subject);
  return beginLogin(deps, user, firstFactor, context);
}
