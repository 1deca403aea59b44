import type { ClientInfo } from '../../core/client.js';
import { continueLogin, type LoginResult } from '../../login/pipeline.js';
import { loginWithPassword } from '../../login/password.js';
import { customStageOf, tokenRefusalOf } from '../../login/project-stages.js';
import { loginMethod, type LoginProofs } from '../../login/proofs.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { User } from '../../account/model.js';
import { issueApiToken } from '../api-tokens.js';
import { msg, msgid } from '../../core/i18n/message.js';

export interface ObtainTokenInput {
  /** The username, or the email in projects that log in by email (DRF's `username` field). */
  login: string;
  password: string;
  /** The second factor's code (TOTP or recovery code), required when the user has one. */
  code: string;
  client: ClientInfo;
}

/** DRF's refusal of credentials, word for word (docs/api.md): clients may match on it. */
export const TOKEN_INVALID_CREDENTIALS = msgid('Unable to log in with provided credentials.');
export const TOKEN_EMAIL_UNVERIFIED = msg('Your email address is not verified. Follow the link in the confirmation email, then ask for a token again.');
/** Under verification by code: the code is mailed to a client that can type it back, which this one cannot. */
export const TOKEN_EMAIL_UNVERIFIED_BY_CODE = msg('Your email address is not verified. Sign in on the site to verify it with a mailed code, then ask for a token again.');
export const TOKEN_CODE_REQUIRED = msg('Two-factor authentication is on for this account: send its code in "code".');
export const TOKEN_LOGIN_CODE_REQUIRED = msgid('Signing in here needs a code mailed to you, which this endpoint cannot take. Sign in on the site instead.');

function invalidCredentials(cause?: unknown): LatchkeyError {
  return new LatchkeyError('invalid_credentials', TOKEN_INVALID_CREDENTIALS, cause === undefined ? {} : { cause });
}

/** The login flow's refusal of the credentials, in DRF's words; every other outcome as it is. */
async function withTokenWording<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isLatchkeyError(error, 'invalid_credentials')) throw invalidCredentials(error);
    throw error;
  }
}

/**
 * Where a login that did not end in `authenticated` leaves a token request. An inactive account
 * gets the same refusal as a wrong password, as DRF gives it: the answer must not tell someone
 * who has the password (or is guessing it) that the account exists but is switched off.
 * Unverified email is said plainly, as on every other login path: only the right password gets
 * that far.
 */
function refusalOf(deps: Pick<LatchkeyDeps, 'settings' | 'adapter'>, result: Exclude<LoginResult, { status: 'authenticated' }>): LatchkeyError {
  if (result.status === 'stopped' && result.stage === 'verify_email') {
    return new LatchkeyError('email_unverified', deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED ? TOKEN_EMAIL_UNVERIFIED_BY_CODE : TOKEN_EMAIL_UNVERIFIED);
  }
  // ACCOUNT_LOGIN_BY_CODE_REQUIRED: the code is bound to the client that asked for it, and a token
  // client keeps nothing between requests to bring it back to, so it can never pass this stage.
  if (result.status === 'stopped' && result.stage === 'login_by_code') return new LatchkeyError('permission_denied', TOKEN_LOGIN_CODE_REQUIRED);
  // A stage of the project's own ("accept the new terms") is done on the site, never here.
  const custom = result.status === 'stopped' ? customStageOf(deps, result.stage) : undefined;
  if (custom !== undefined) return tokenRefusalOf(custom);
  // 'inactive', or 'ended': the password changed (or the account went) between the two steps.
  return invalidCredentials();
}

/**
 * POST /api/auth-token/: a login like any other, that ends in the user's API token instead of a
 * session. It runs the login flow itself (loginWithPassword), so the login rate limits, the
 * one-hash rule for unknown accounts, the generic refusal and every login stage apply unchanged:
 * an unverified account (under mandatory verification) is stopped, and a user with a second
 * factor must send its code along, since a token client has no pending state to come back to.
 *
 * Throws LatchkeyError 'invalid_credentials' (wrong or missing credentials, unknown or inactive
 * account: one message for all), 'rate_limited', 'email_unverified', 'permission_denied' (the
 * project requires a mailed code at every login: ACCOUNT_LOGIN_BY_CODE_REQUIRED; the login waits
 * at a stage of the project's own, with its tokenRefusal; the adapter's preLogin refused it), 'invalid_input' with
 * reason 'mfa_required' (param 'code': MFA is on and no code was sent), or 'incorrect_code' (the
 * code is wrong; counted against login_failed like a wrong password).
 *
 * The same key comes back on every call until the token is deleted, as DRF does.
 */
export async function obtainApiToken(deps: LatchkeyDeps, input: ObtainTokenInput): Promise<{ user: User; key: string }> {
  // A token client keeps no cookie: it is never asked to trust a browser, nor trusted as one; and
  // nothing between requests: no stage mails it a code it could not bring back.
  const context = { client: input.client, takesMailedCodes: false };
  // DRF's serializer answers an empty field with its one generic refusal, not a field's (the
  // /api/ door refuses a blank field before this, in DRF's words).
  if (input.login.trim() === '' || input.password === '') throw invalidCredentials();
  let result = await withTokenWording(loginWithPassword(deps, { login: input.login, password: input.password, ...context }));
  if (result.status === 'stopped' && result.stage === 'mfa_authenticate') {
    if (input.code.trim() === '') {
      throw new LatchkeyError('invalid_input', TOKEN_CODE_REQUIRED, { param: 'code', reason: 'mfa_required' });
    }
    result = await withTokenWording(continueLogin(deps, result.pending, { code: input.code }, context));
  }
  if (result.status !== 'authenticated') throw refusalOf(deps, result);
  const { user, proofs } = result;
  const key = await issueApiToken(deps, user, input.client).catch((error: unknown) => {
    // The account was deleted after the password was checked: as if it had never been there.
    throw isLatchkeyError(error, 'not_found') ? invalidCredentials(error) : error;
  });
  await recordTokenLogin(deps, user, input.client, proofs);
  return { user, key };
}

/**
 * What a token login leaves behind: an audit record with the method, as user_logged_in has. It is
 * not a user_logged_in, and last_login is not touched: DRF's obtain_auth_token does not call
 * Django's login() either, since no session begins (a script fetching its token on every run would
 * otherwise make last_login say nothing about the person). Projects that want to hear of token
 * logins subscribe to api_token_obtained.
 */
async function recordTokenLogin(deps: LatchkeyDeps, user: User, client: ClientInfo, proofs: LoginProofs): Promise<void> {
  await deps.events.emit('api_token_obtained', user.id, client, { method: loginMethod(proofs) });
}
