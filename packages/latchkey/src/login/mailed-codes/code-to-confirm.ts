import type { Settings } from '../../config/settings.js';
import type { LoginStage } from '../stages.js';
import type { LoginCodeState } from './login-by-code.js';

/**
 * Which mailed code a client's answer to "enter the sign-in code" is for, when it may hold two:
 * - the code its login stopped at login_by_code holds (ACCOUNT_LOGIN_BY_CODE_REQUIRED: a code
 *   after the password or the provider; stage-codes.ts), and
 * - the code it asked for to sign in by code (ACCOUNT_LOGIN_BY_CODE_ENABLED; login-by-code.ts).
 * The stopped login's comes first: its first factor is proved and the code is the one step it
 * has left, where the other code would only begin a login. The client's own code counts only
 * while the project offers login by code. The pages' form and the headless API's
 * auth/code/confirm ask here, and the headless API lists `login_by_code` as pending by it.
 */
export type CodeToConfirm<Waiting> =
  /** The code of the login stopped at login_by_code. */
  | { kind: 'stage_code'; waiting: Waiting }
  /** The code the client asked for to sign in by code. */
  | { kind: 'login_code'; state: LoginCodeState }
  | { kind: 'none' };

/**
 * `waiting` is the client's stopped login at whatever stage (or none), `loginCode` the live code
 * it asked for (or none): the doors keep both in the client's session.
 */
export function codeToConfirm<Waiting extends { stage: LoginStage }>(
  settings: Pick<Settings, 'ACCOUNT_LOGIN_BY_CODE_ENABLED'>,
  waiting: Waiting | undefined,
  loginCode: LoginCodeState | undefined,
): CodeToConfirm<Waiting> {
  if (waiting?.stage === 'login_by_code') return { kind: 'stage_code', waiting };
  if (settings.ACCOUNT_LOGIN_BY_CODE_ENABLED && loginCode !== undefined) return { kind: 'login_code', state: loginCode };
  return { kind: 'none' };
}
