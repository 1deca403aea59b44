import { randomAlphanumeric } from '../../core/random.js';

/** Django's UNUSABLE_PASSWORD_PREFIX: `!` never begins an encoded hash of any hasher. */
const UNUSABLE_PASSWORD_PREFIX = '!';
const UNUSABLE_PASSWORD_SUFFIX_LENGTH = 40;

/**
 * The marker stored for an account that has no password (social-only, or set unusable by an
 * admin), as Django's `make_password(None)`. The random suffix makes every marker different, so
 * the stored value of one account never reveals that another account has no password either
 * (Django ticket #20079).
 */
export function makeUnusablePassword(): string {
  return UNUSABLE_PASSWORD_PREFIX + randomAlphanumeric(UNUSABLE_PASSWORD_SUFFIX_LENGTH);
}

/**
 * Whether `encoded` can ever match a password. Unlike Django, which calls a missing (None)
 * password usable for historical reasons, a missing or empty value is unusable here: an account
 * without a stored hash has no password.
 */
export function isUsablePassword(encoded: string | null | undefined): boolean {
  return typeof encoded === 'string' && encoded !== '' && !encoded.startsWith(UNUSABLE_PASSWORD_PREFIX);
}
