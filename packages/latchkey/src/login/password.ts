import { credentialsRefusal, findUserByLogin, loginFailureKey, TOO_MANY_ATTEMPTS, verifyCredentials } from '../account/credentials.js';
import { FieldChecks, LatchkeyError } from '../core/errors.js';
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
  return user ? loginFailureKey(user) : `login:${normalizeUsernameKey(login.trim())}`;
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
  // As Django's login form: an empty field is refused on the field, both at once, before anything
  // is looked up or counted (an empty field reveals nothing and proves nothing).
  const checks = new FieldChecks();
  await checks.check(() => {
    if (login.trim() === '') throw new LatchkeyError('invalid_input', 'This field is required.', { param: 'login', reason: 'required' });
  });
  await checks.check(() => {
    if (password === '') throw new LatchkeyError('invalid_input', 'This field is required.', { param: 'password', reason: 'required' });
  });
  checks.finish();
  const subject = { ip: context.client.ip, key: await loginKey(deps, login) };
  // The attempt is counted under both limits at once, or, when either is full, under neither: a
  // refused attempt must not use up the account's allowance. A refusal names the longest wait of
  // the full windows: the IP's minute may end in two seconds while this address stays held back
  // from the account for minutes, and a client told to come back in two seconds would only be
  // refused again.
  const decision = await deps.rateLimits.consumeTogether([
    { action: 'login', subject: { ip: context.client.ip } },
    { action: 'login_failed', subject },
  ]);
  if (!decision.allowed) throw new RateLimitedError(decision.refusedBy ?? 'login_failed', decision.retryAfterSeconds, TOO_MANY_ATTEMPTS);

  const user = await verifyCredentials(deps, { login, password });
  if (!user) throw credentialsRefusal(deps.settings, login);
  await deps.rateLimits.refund('login_failed', subject);
  return beginLogin(deps, user, firstFactor, context);
}
