import { LatchkeyError } from '../../core/errors.js';
import { msg, nmsg, type Message } from '../../core/i18n/message.js';
import { isCommonPassword } from './common-passwords.js';
import { codePointLength, exceedsMaximumLengthRatio, quickRatio } from './similarity.js';

export type PasswordValidatorName = 'minimum_length' | 'maximum_length' | 'common' | 'numeric' | 'user_attribute_similarity';

export interface PasswordPolicy {
  /** Which checks run; `maximum_length` always runs first, the others in this order. */
  validators: PasswordValidatorName[];
  /** In characters (code points). Django: 8. */
  minLength: number;
  /** In UTF-8 bytes; the same bound the hashing service enforces. */
  maxBytes: number;
  /** Django: 0.7. At least 0.1, as Django requires. */
  maxSimilarity: number;
}

export interface PasswordProblem {
  code: 'password_too_short' | 'password_too_long' | 'password_too_common' | 'password_entirely_numeric' | 'password_too_similar';
  /** What the person reads, in Django's words, translated where it is shown (englishText gives the English). */
  message: Message;
}

export interface PasswordContext {
  username?: string | null;
  email?: string | null;
  name?: string | null;
}

/** The attributes compared, in Django's order, with the message that names each (a whole sentence, for translators). */
const USER_ATTRIBUTES: { key: keyof PasswordContext; tooSimilar: Message }[] = [
  { key: 'username', tooSimilar: msg('The password is too similar to the username.') },
  { key: 'name', tooSimilar: msg('The password is too similar to the name.') },
  { key: 'email', tooSimilar: msg('The password is too similar to the email address.') },
];

/**
 * Checks a new password the way Django's AUTH_PASSWORD_VALIDATORS do and returns every problem
 * found (none when it is acceptable). No composition rules (NIST SP 800-63B): length, a common-
 * password list, not only digits, not close to the user's own names.
 */
export function validatePassword(password: string, context: PasswordContext, policy: PasswordPolicy): PasswordProblem[] {
  if (policy.maxSimilarity < 0.1) throw new LatchkeyError('configuration_invalid', 'The password policy maxSimilarity must be at least 0.1.');
  const enabled = new Set(policy.validators);
  // First and alone: a megabyte of input is refused without lower-casing, scanning or comparing it.
  if (enabled.has('maximum_length') && Buffer.byteLength(password, 'utf8') > policy.maxBytes) {
    const { maxBytes } = policy;
    return [{ code: 'password_too_long', message: nmsg('This password is too long. It must contain at most {max_bytes} byte.', 'This password is too long. It must contain at most {max_bytes} bytes.', maxBytes, { max_bytes: maxBytes }) }];
  }

  const problems: PasswordProblem[] = [];
  for (const validator of enabled) {
    const problem = runValidator(validator, password, context, policy);
    if (problem !== null) problems.push(problem);
  }
  return problems;
}

function runValidator(validator: PasswordValidatorName, password: string, context: PasswordContext, policy: PasswordPolicy): PasswordProblem | null {
  switch (validator) {
    case 'maximum_length':
      return null;
    case 'minimum_length':
      return codePointLength(password) < policy.minLength ? tooShort(policy.minLength) : null;
    case 'common':
      return isCommonPassword(password) ? { code: 'password_too_common', message: msg('This password is too common.') } : null;
    case 'numeric':
      // Python's str.isdigit, which Django uses, also accepts non-ASCII decimal digits.
      return /^\p{Nd}+$/u.test(password) ? { code: 'password_entirely_numeric', message: msg('This password is entirely numeric.') } : null;
    case 'user_attribute_similarity':
      return tooSimilar(password, context, policy.maxSimilarity);
  }
}

function tooShort(minLength: number): PasswordProblem {
  return {
    code: 'password_too_short',
    message: nmsg('This password is too short. It must contain at least {min_length} character.', 'This password is too short. It must contain at least {min_length} characters.', minLength, { min_length: minLength }),
  };
}

/**
 * Django's UserAttributeSimilarityValidator: the lower-cased password against each attribute, its
 * parts split at non-word characters (so "jane.doe@example.com" also gives "jane", "doe",
 * "example" and "com") and, for an email address, its local part. Reports the first attribute
 * that is too close, as Django does.
 */
function tooSimilar(password: string, context: PasswordContext, maxSimilarity: number): PasswordProblem | null {
  const lowered = password.toLowerCase();
  for (const { key, tooSimilar } of USER_ATTRIBUTES) {
    const value = context[key];
    if (typeof value !== 'string' || value === '') continue;
    for (const part of comparedParts(value.toLowerCase(), key === 'email')) {
      if (exceedsMaximumLengthRatio(lowered, maxSimilarity, part)) continue;
      if (quickRatio(lowered, part) >= maxSimilarity) {
        return { code: 'password_too_similar', message: tooSimilar };
      }
    }
  }
  return null;
}

function comparedParts(value: string, isEmail: boolean): Set<string> {
  // Python's \W+ (re, str pattern): anything but letters, digits and the underscore. Empty
  // parts (from a leading or trailing separator) would only ever match an empty password.
  const parts = new Set(value.split(/[^\p{L}\p{N}_]+/u).filter((part) => part !== ''));
  parts.add(value);
  if (isEmail && value.includes('@')) parts.add(value.slice(0, value.lastIndexOf('@')));
  return parts;
}
