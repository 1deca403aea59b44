import { dictionary } from '@zxcvbn-ts/language-common';

let commonPasswords: Set<string> | null = null;

/**
 * Whether `password` is in zxcvbn-ts's list of common passwords (about 49,000, from leaked
 * password corpora), compared as Django's CommonPasswordValidator compares: lower case, with
 * surrounding whitespace removed. The set is built on first use, not at import.
 */
export function isCommonPassword(password: string): boolean {
  commonPasswords ??= new Set(dictionary.passwords.map((entry) => entry.trim().toLowerCase()));
  return commonPasswords.has(password.toLowerCase().trim());
}
