import { LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { LatchkeyDeps } from '../../deps.js';
import { loginWithPassword, type PasswordLoginInput } from '../../login/password.js';
import type { LoginResult } from '../../login/pipeline.js';
import { mayEnterAdmin } from '../access.js';

/** Django's admin says this, whether the password was wrong or right for someone who is not staff. */
export const STAFF_ONLY = msg('Please enter the correct username and password for a staff account. Note that both fields may be case-sensitive.');

/**
 * The admin's own login form: the password as an `admin_password` first factor, through the same
 * pipeline as every login (rate limits, email verification, MFA for users who have it: stricter
 * than Django, whose admin form skips allauth's). Someone who is not active staff is refused with
 * the message a wrong password gets, before any session is made for them.
 */
export async function loginToAdmin(deps: LatchkeyDeps, input: PasswordLoginInput): Promise<LoginResult> {
  let result: LoginResult;
  try {
    result = await loginWithPassword(deps, input, { kind: 'admin_password' });
  } catch (error) {
    if (error instanceof LatchkeyError && error.code === 'invalid_credentials') throw new LatchkeyError('invalid_credentials', STAFF_ONLY);
    throw error;
  }
  if (result.status !== 'ended' && !mayEnterAdmin(result.user)) throw new LatchkeyError('invalid_credentials', STAFF_ONLY);
  return result;
}
