/**
 * Every failure a flow reports carries a stable code. Adapters (pages, headless API, token API,
 * admin, CLI) translate codes into their own shapes; they never parse messages.
 */
export type LatchkeyErrorCode =
  | 'invalid_input'
  | 'username_taken'
  | 'email_taken'
  | 'invalid_username'
  | 'invalid_email'
  | 'password_invalid'
  | 'not_found'
  | 'configuration_invalid'
  | 'database_unavailable'
  | 'mail_failed'
  | 'server_busy'
  | 'invalid_key'
  | 'invalid_credentials'
  | 'rate_limited'
  | 'signup_closed'
  | 'reauthentication_required'
  | 'authenticator_exists'
  | 'incorrect_code'
  | 'email_unverified';

export class LatchkeyError extends Error {
  readonly code: LatchkeyErrorCode;
  /** The input field the error concerns, when there is one (a form field or JSON key). */
  readonly param: string | undefined;
  /**
   * A finer reason within the code, for adapters whose clients route on it (the headless API
   * gives allauth's and Django's codes: 'password_too_short', 'password_mismatch', 'required').
   */
  readonly reason: string | undefined;

  constructor(code: LatchkeyErrorCode, message: string, options: { param?: string; reason?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LatchkeyError';
    this.code = code;
    this.param = options.param;
    this.reason = options.reason;
  }
}

export function isLatchkeyError(value: unknown, code?: LatchkeyErrorCode): value is LatchkeyError {
  return value instanceof LatchkeyError && (code === undefined || value.code === code);
}
