import { LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { User } from '../model.js';
import type { ClientInfo } from '../../core/client.js';
import { msg } from '../../core/i18n/message.js';

export const INCORRECT_PASSWORD = msg('Incorrect password.');

export interface ReauthenticateInput {
  user: User;
  password: string;
  client: ClientInfo;
}

/**
 * A signed-in user proves again who they are, before a sensitive change (emails, later MFA). Every
 * attempt counts against the per-user limit, so a stolen session cannot guess the password at
 * leisure; every refusal reads the same. The adapter records the success in the session.
 */
export async function reauthenticate(deps: Pick<LatchkeyDeps, 'rateLimits' | 'passwords' | 'store'>, input: ReauthenticateInput): Promise<void> {
  const { user } = input;
  await deps.rateLimits.enforce('reauthenticate', { ip: input.client.ip, userId: user.id });
  // An empty password still costs nothing and says nothing more than a wrong one.
  if (input.password === '') throw new LatchkeyError('invalid_credentials', INCORRECT_PASSWORD, { param: 'password' });
  // An account without a usable password costs one decoy verification and is refused the same way.
  const { valid, needsRehash } = await deps.passwords.verify(input.password, user.password);
  if (!valid) throw new LatchkeyError('invalid_credentials', INCORRECT_PASSWORD, { param: 'password' });
  if (needsRehash) {
    // As on login (credentials.ts): upgrade an old hash, unless a concurrent change replaced it.
    await deps.store.users.replacePassword(user.id, user.password, await deps.passwords.hash(input.password));
  }
}

/** allauth's window: a sensitive change needs a login or reauthentication within the last 5 minutes. */
export const REAUTHENTICATION_WINDOW_SECONDS = 300;
export const REAUTHENTICATION_REQUIRED = msg('Please confirm it is you before making this change.');

/**
 * Refuses a sensitive change ('reauthentication_required') unless the user logged in or
 * reauthenticated within the window. A flow calls it, so every adapter enforces the same rule:
 * the pages answer with the reauthentication page, the headless API with its reauthenticate flow.
 */
export function requireRecentAuthentication(deps: Pick<LatchkeyDeps, 'clock'>, lastAuthenticatedAt: Date | undefined): void {
  if (!isRecentAuthentication(deps, lastAuthenticatedAt)) throw new LatchkeyError('reauthentication_required', REAUTHENTICATION_REQUIRED);
}

export function isRecentAuthentication(deps: Pick<LatchkeyDeps, 'clock'>, lastAuthenticatedAt: Date | undefined): boolean {
  if (lastAuthenticatedAt === undefined) return false;
  const age = deps.clock.now().getTime() - lastAuthenticatedAt.getTime();
  return age >= 0 && age <= REAUTHENTICATION_WINDOW_SECONDS * 1000;
}
