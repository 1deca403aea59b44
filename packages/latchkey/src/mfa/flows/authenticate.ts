import { loginFailureKey, TOO_MANY_ATTEMPTS } from '../../account/credentials.js';
import type { ClientInfo } from '../../core/client.js';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { LatchkeyError } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { AuthenticatorType } from '../model.js';
import type { User } from '../../account/model.js';
import { useCode } from '../authenticators.js';
import { trustToken } from '../trust.js';
import type { WebauthnCeremony } from '../webauthn.js';
import { proveWebauthnKey } from './webauthn.js';
import { msg } from '../../core/i18n/message.js';

/** One message for every refused code, whichever kind it was and whatever was wrong with it. */
export const INCORRECT_CODE = msg('Incorrect code.');

/**
 * The code given at a login's second step. Wrong codes count against the same limit as wrong
 * passwords (login_failed, per IP and per account), so a stolen password does not buy unlimited
 * guesses at the code; as for passwords, the attempt is counted before it is checked, and a right
 * code takes its own count back.
 */
export async function checkLoginCode(deps: LatchkeyDeps, user: User, code: string, client: ClientInfo): Promise<AuthenticatorType> {
  return countedAsLoginAttempt(deps, user, client, () => checkCode(deps, user, code, client, 'login'));
}

/** A security key at a login's second step, counted against the login limits like a code. */
export async function checkLoginWebauthn(deps: LatchkeyDeps, user: User, answer: WebauthnAnswer, client: ClientInfo): Promise<void> {
  await countedAsLoginAttempt(deps, user, client, () => proveKey(deps, user, answer, client, 'authenticate'));
}

async function countedAsLoginAttempt<T>(deps: LatchkeyDeps, user: User, client: ClientInfo, check: () => Promise<T>): Promise<T> {
  const subject = { ip: client.ip, key: loginFailureKey(user) };
  const failures = await deps.rateLimits.consume('login_failed', subject);
  if (!failures.allowed) throw new RateLimitedError('login_failed', failures.retryAfterSeconds, TOO_MANY_ATTEMPTS);
  const result = await check();
  await deps.rateLimits.refund('login_failed', subject);
  return result;
}

/** A security key's answer to a ceremony, with the ceremony the client's session kept. */
export interface WebauthnAnswer {
  ceremony: WebauthnCeremony | undefined;
  credential: AuthenticationResponseJSON;
}

/** A signed-in user proves again who they are with a security key (allauth's webauthn reauthenticate). */
export async function reauthenticateWithWebauthn(deps: LatchkeyDeps, input: { user: User; answer: WebauthnAnswer; client: ClientInfo }): Promise<void> {
  await deps.rateLimits.enforce('reauthenticate', { ip: input.client.ip, userId: input.user.id });
  await proveKey(deps, input.user, input.answer, input.client, 'reauthenticate');
}

async function proveKey(deps: LatchkeyDeps, user: User, answer: WebauthnAnswer, client: ClientInfo, purpose: 'authenticate' | 'reauthenticate'): Promise<void> {
  await proveWebauthnKey(deps, { ...answer, purpose, user, client });
}

/**
 * A signed-in user with a second factor proves again who they are with a code instead of the
 * password (allauth's 2fa/reauthenticate/); limited like password reauthentication.
 */
export async function reauthenticateWithCode(deps: LatchkeyDeps, input: { user: User; code: string; client: ClientInfo }): Promise<AuthenticatorType> {
  await deps.rateLimits.enforce('reauthenticate', { ip: input.client.ip, userId: input.user.id });
  return checkCode(deps, input.user, input.code, input.client, 'reauthenticate');
}

async function checkCode(deps: LatchkeyDeps, user: User, code: string, client: ClientInfo, purpose: 'login' | 'reauthenticate'): Promise<AuthenticatorType> {
  const type = await useCode(deps, user, code);
  if (type === undefined) {
    await deps.events.emit('authentication_failed', user.id, client, { method: 'mfa', purpose });
    throw new LatchkeyError('incorrect_code', INCORRECT_CODE, { param: 'code' });
  }
  await deps.events.emit('authenticator_used', user.id, client, { type, purpose });
  return type;
}

/**
 * The "trust this browser" cookie value for a user who has just given a right code, when the
 * project allows it (MFA_TRUST_ENABLED); undefined otherwise. See mfa/trust.ts.
 */
export async function trustThisBrowser(deps: LatchkeyDeps, user: User): Promise<string | undefined> {
  if (!deps.settings.MFA_TRUST_ENABLED) return undefined;
  return trustToken(deps, user, await deps.store.authenticators.listForUser(user.id));
}
