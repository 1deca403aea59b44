/**
 * allauth's rate-limit notation (ACCOUNT_RATE_LIMITS): comma-separated rules
 * `<count>/<period>[/<scope>]`, e.g. "10/m/ip,5/5m/key". The period is `s`, `m`, `h` or `d` with an
 * optional multiplier (`5m` is 300 seconds); the scope says whose attempts a rule counts: the
 * client's IP (the default, as in allauth), the `key` being attacked (a login, an email address),
 * the signed-in `user`, or `ip+key`: the key as attacked from one IP, so that a stranger who fills
 * it holds back only their own address, never the key's owner elsewhere (docs/accounts.md, "Rate
 * limits").
 */
import { LatchkeyError } from '../errors.js';

/** The actions ACCOUNT_RATE_LIMITS may limit, as allauth names them. */
export const RATE_LIMIT_ACTIONS = [
  'login',
  'login_failed',
  'signup',
  'confirm_email',
  'reset_password',
  'reset_password_from_key',
  'change_password',
  'manage_email',
  'reauthenticate',
  'request_login_code',
] as const;

export type RateLimitAction = (typeof RATE_LIMIT_ACTIONS)[number];

/** The ACCOUNT_RATE_LIMITS setting: rules per action (the defaults for any left out), or false for no limits. */
export type RateLimitRuleSettings = false | Partial<Record<RateLimitAction, string>>;

export const RATE_LIMIT_SCOPES = ['ip', 'key', 'user', 'ip+key'] as const;

export type RateLimitScope = (typeof RATE_LIMIT_SCOPES)[number];

export interface RateLimitRule {
  /** Attempts allowed per window; the next one is refused. 0 refuses every attempt. */
  readonly limit: number;
  readonly windowSeconds: number;
  readonly scope: RateLimitScope;
}

const PERIOD_UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
const RULE_PATTERN = /^(\d+)\/(\d*)([smhd])(?:\/(ip\+key|ip|key|user))?$/;

function invalidRules(text: string, reason: string): LatchkeyError {
  return new LatchkeyError(
    'configuration_invalid',
    `ACCOUNT_RATE_LIMITS: ${JSON.stringify(text)} is not a valid rate-limit rule list (${reason}); expected rules like "10/m/ip,5/5m/key", scopes ${RATE_LIMIT_SCOPES.join(', ')}.`,
  );
}

/** Parses one action's rules; throws 'configuration_invalid' on anything else. */
export function parseRateLimitRules(text: string): RateLimitRule[] {
  const parts = text.split(',').map((part) => part.trim());
  return parts.map((part) => {
    const match = RULE_PATTERN.exec(part);
    if (match === null) throw invalidRules(text, `cannot read ${JSON.stringify(part)}`);
    const [, count = '', multiplier = '', unit = '', scope = 'ip'] = match;
    const windowSeconds = (multiplier === '' ? 1 : Number(multiplier)) * (PERIOD_UNIT_SECONDS[unit] ?? 0);
    const limit = Number(count);
    // The settings pattern lets "0m" and absurdly long digit strings through; a window of zero
    // seconds or a count beyond exact integers would make a rule that silently never applies.
    if (windowSeconds <= 0 || !Number.isSafeInteger(windowSeconds)) throw invalidRules(text, `the period of ${JSON.stringify(part)} must be positive`);
    if (!Number.isSafeInteger(limit)) throw invalidRules(text, `the count of ${JSON.stringify(part)} is too large`);
    return { limit, windowSeconds, scope: scope as RateLimitScope };
  });
}
