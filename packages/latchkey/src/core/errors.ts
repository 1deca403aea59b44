import { englishText, msg, type Message, type MessageParams } from './i18n/message.js';

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
  | 'social_app_exists'
  | 'social_account_exists'
  | 'last_login_method'
  | 'incorrect_code'
  | 'email_unverified'
  /** The login needs a code mailed to the account (ACCOUNT_LOGIN_BY_CODE_REQUIRED), which has no address to mail it to. */
  | 'no_email_address'
  /** Signed in, but not allowed to do this (a staff user who is not a superuser granting admin permissions). */
  | 'permission_denied';

/**
 * The error Latchkey throws for a refusal a person or the project can cause (a wrong password, a
 * taken address, bad settings): `code` says which, and each door answers it in its own shape.
 */
export class LatchkeyError extends Error {
  readonly code: LatchkeyErrorCode;
  /** The input field the error concerns, when there is one (a form field or JSON key). */
  readonly param: string | undefined;
  /**
   * A finer reason within the code, for adapters whose clients route on it (the headless API
   * gives allauth's and Django's codes: 'password_too_short', 'password_mismatch', 'required').
   */
  readonly reason: string | undefined;
  /**
   * What a person reads, translated where it is shown (core/i18n): the English text with its
   * `{name}` placeholders and their values. `message` is the same in English, for logs and the CLI.
   */
  readonly text: Message;

  /**
   * `message` is the English text and the catalog's message id, so it is a string literal that
   * `npm run makemessages` finds; what varies goes in `params` (`{ params: { seconds } }` for
   * "Try again in {seconds} seconds."), or the whole message is an nmsg() for a count.
   */
  constructor(code: LatchkeyErrorCode, message: string | Message, options: { param?: string; reason?: string; cause?: unknown; params?: MessageParams } = {}) {
    const text: Message = typeof message === 'string' ? msg(message, options.params) : message; // makemessages: passes a message on
    super(englishText(text), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LatchkeyError';
    this.code = code;
    this.param = options.param;
    this.reason = options.reason;
    this.text = text;
  }
}

/**
 * Every field's refusal of one input at once (a signup with four bad fields gets four messages in
 * one answer, as a Django form's errors). Read as a single LatchkeyError it is its first refusal,
 * so a door that knows only one still answers sensibly; the doors show them all (refusalsOf).
 */
export class LatchkeyFieldErrors extends LatchkeyError {
  readonly refusals: readonly LatchkeyError[];

  constructor(refusals: readonly [LatchkeyError, ...LatchkeyError[]]) {
    const [first] = refusals;
    super(first.code, first.text, { ...(first.param === undefined ? {} : { param: first.param }), ...(first.reason === undefined ? {} : { reason: first.reason }) });
    this.refusals = refusals;
  }
}

/** Each refusal a LatchkeyError carries: all of a LatchkeyFieldErrors', or the one. */
export function refusalsOf(error: LatchkeyError): readonly LatchkeyError[] {
  return error instanceof LatchkeyFieldErrors ? error.refusals : [error];
}

/**
 * Runs field checks one after another and keeps every refusal of a field (a LatchkeyError with a
 * `param`) instead of stopping at the first; anything else (a closed signup, a rate limit, a
 * failure) stops at once. `check` gives a check's value, or undefined when it was refused;
 * `finish()` throws the refusals together, if any.
 */
export class FieldChecks {
  private readonly refused: LatchkeyError[] = [];

  async check<T>(run: () => T | Promise<T>): Promise<T | undefined> {
    try {
      return await run();
    } catch (error) {
      if (!isLatchkeyError(error) || error.param === undefined) throw error;
      this.refused.push(...refusalsOf(error));
      return undefined;
    }
  }

  get clean(): boolean {
    return this.refused.length === 0;
  }

  finish(): void {
    const [first, ...rest] = this.refused;
    if (first !== undefined) throw rest.length === 0 ? first : new LatchkeyFieldErrors([first, ...rest]);
  }
}

/** Whether `value` is a LatchkeyError, and with `code` given, one of that code. */
export function isLatchkeyError(value: unknown, code?: LatchkeyErrorCode): value is LatchkeyError {
  return value instanceof LatchkeyError && (code === undefined || value.code === code);
}

/**
 * What kind of refusal each code is, whatever the door: the one table every adapter maps to its
 * own shape (a page's status, the headless API's status and envelope, Django REST framework's
 * bodies), so that no door decides on its own that, say, a closed signup is a conflict.
 */
export type ErrorKind =
  /** The input is wrong: the person can fix it. */
  | 'invalid'
  | 'not_found'
  /** The change conflicts with the account's state (an authenticator exists, the address is unverified). */
  | 'conflict'
  /** Not allowed at all (signup is closed). */
  | 'forbidden'
  /** A rate limit: try again later. */
  | 'too_many'
  /** The user must prove again who they are before this change. */
  | 'reauthenticate'
  /** The server cannot do it now (busy, mail or database down, misconfigured): not the person's fault. */
  | 'unavailable';

const ERROR_KINDS: Record<LatchkeyErrorCode, ErrorKind> = {
  invalid_input: 'invalid',
  username_taken: 'invalid',
  email_taken: 'invalid',
  invalid_username: 'invalid',
  invalid_email: 'invalid',
  password_invalid: 'invalid',
  invalid_key: 'invalid',
  invalid_credentials: 'invalid',
  incorrect_code: 'invalid',
  not_found: 'not_found',
  authenticator_exists: 'conflict',
  social_app_exists: 'conflict',
  social_account_exists: 'conflict',
  last_login_method: 'conflict',
  email_unverified: 'conflict',
  signup_closed: 'forbidden',
  no_email_address: 'forbidden',
  permission_denied: 'forbidden',
  rate_limited: 'too_many',
  reauthentication_required: 'reauthenticate',
  server_busy: 'unavailable',
  mail_failed: 'unavailable',
  database_unavailable: 'unavailable',
  configuration_invalid: 'unavailable',
};

export function errorKind(error: LatchkeyError): ErrorKind {
  return ERROR_KINDS[error.code];
}
