import type { LatchkeyDeps } from '../deps.js';
import type { User } from './model.js';
import { normalizeUsernameKey, tryNormalizeEmail } from '../core/identifiers.js';
import type { ClientInfo } from '../core/client.js';
import { LatchkeyError } from '../core/errors.js';
import type { Settings } from '../config/settings.js';
import { msg, msgid } from '../core/i18n/message.js';

/** One refusal for every credential that does not hold: unknown account, wrong password, no password. */
export const INVALID_CREDENTIALS = msg('The username and/or password you specified are not correct.');
/** The same refusal where the person signed in with an address (allauth's email_password_mismatch). */
export const INVALID_EMAIL_CREDENTIALS = msg('The email address and/or password you specified are not correct.');

/**
 * The refusal of credentials that do not hold, worded for what the person typed, as allauth's:
 * an address where the project signs in by email only or the login has an '@', else a username.
 * It depends on the input and the settings alone, so it tells nothing of the account. `reason` is
 * allauth's code for it, which the headless API gives.
 */
export function credentialsRefusal(settings: Pick<Settings, 'USERNAME_TYPE'>, login: string): LatchkeyError {
  const byAddress = settings.USERNAME_TYPE === 'email' || login.includes('@');
  return byAddress
    ? new LatchkeyError('invalid_credentials', INVALID_EMAIL_CREDENTIALS, { reason: 'email_password_mismatch' })
    : new LatchkeyError('invalid_credentials', INVALID_CREDENTIALS, { reason: 'username_password_mismatch' });
}
/** The refusal once the login limits (per IP, per account) are reached, for a password and a code alike. */
export const TOO_MANY_ATTEMPTS = msgid('Too many failed login attempts. Try again later.');

/**
 * The key an account's failed logins count under (login_failed): its id, so that its username,
 * its email and every variant of either count against the one account.
 */
export function loginFailureKey(user: Pick<User, 'id'>): string {
  return `user:${user.id}`;
}

/**
 * Forgets the failed logins counted against the account, from every address (`key`) and from
 * this client's (`ip+key`), once its owner has proved who they are: a completed login, a
 * completed password reset. What NIST SP 800-63B caps is CONSECUTIVE failures, and the owner's
 * proof ends the run; without this, a stranger who filled the account's daily limit would keep
 * the owner out for the rest of the day. The IP's own counts stay: signing in to one's own account
 * never clears an address's failures against others (docs/accounts.md, "Rate limits").
 */
export async function forgetLoginFailures(deps: Pick<LatchkeyDeps, 'rateLimits'>, user: Pick<User, 'id'>, client: ClientInfo): Promise<void> {
  await deps.rateLimits.clear('login_failed', { ip: client.ip, key: loginFailureKey(user) }, ['key', 'ip+key']);
}

/**
 * Finds the account a login identifier names, by the methods the project allows
 * (ACCOUNT_LOGIN_METHODS): an identifier with '@' is tried as an email when email login is on,
 * anything else as a username. Variants of one identifier (case, width, NFKC) find one account.
 */
export async function findUserByLogin(deps: Pick<LatchkeyDeps, 'settings' | 'store'>, login: string): Promise<User | undefined> {
  const methods = deps.settings.ACCOUNT_LOGIN_METHODS;
  const trimmed = login.trim();
  // eslint-disable-next-line no-control-regex
  if (trimmed === '' || trimmed.length > 320 || /[\u0000-\u001f\u007f]/.test(trimmed)) return undefined;
  if (methods.includes('email') && trimmed.normalize('NFKC').includes('@')) {
    const email = tryNormalizeEmail(trimmed);
    const user = email === undefined ? undefined : await findUserByEmail(deps, email);
    if (user) return user;
  }
  if (methods.includes('username') && deps.settings.USERNAME_TYPE === 'username') {
    return deps.store.users.findByUsername(normalizeUsernameKey(trimmed));
  }
  return undefined;
}

/**
 * In an email project the address is the unique login. In a username project several accounts
 * may have typed the same address, so the one that verified it wins; without a verified owner,
 * only an unambiguous address logs in. Otherwise whoever registered an address first, unverified,
 * could make its real owner's logins land in their account.
 */
async function findUserByEmail(deps: Pick<LatchkeyDeps, 'settings' | 'store'>, email: string): Promise<User | undefined> {
  const { users, emailAddresses } = deps.store;
  if (deps.settings.USERNAME_TYPE === 'email') return users.findByEmail(email);
  const verified = await emailAddresses.findVerified(email);
  if (verified) return users.findById(verified.userId);
  const holders = new Set((await emailAddresses.listByEmail(email)).map((address) => address.userId));
  const [only] = holders;
  return holders.size === 1 && only !== undefined ? users.findById(only) : undefined;
}

/**
 * The credentials stage of every password login (pages, headless API, token API, admin). It
 * costs exactly one password hash whether or not the account exists, so neither the answer nor
 * its timing says which accounts exist. A correct password stored with an older hasher or older
 * parameters is re-hashed with the current default, as Django does on login.
 *
 * Returns the user whose password matched, active or not: whether an inactive or unverified
 * account may continue is the login flow's decision, made after this stage.
 */
export async function verifyCredentials(
  deps: Pick<LatchkeyDeps, 'settings' | 'store' | 'passwords'>,
  input: { login: string; password: string },
): Promise<User | undefined> {
  const user = await findUserByLogin(deps, input.login);
  if (!user) {
    await deps.passwords.verifyDummy(input.password);
    return undefined;
  }
  const { valid, needsRehash } = await deps.passwords.verify(input.password, user.password);
  if (!valid) return undefined;
  if (needsRehash) {
    const upgraded = await deps.passwords.hash(input.password);
    // Only if the stored hash is still the one we verified: a concurrent password change wins.
    if (await deps.store.users.replacePassword(user.id, user.password, upgraded)) user.password = upgraded;
  }
  return user;
}
