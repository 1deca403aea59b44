/**
 * A username for a person signing up through a provider, in a project whose users have usernames
 * (allauth's populate_username): the one the provider suggested, else the address's local part,
 * made valid, with a number added when it is taken. The person can change it afterwards.
 */
import { randomInt } from 'node:crypto';
import { USERNAME_MAX_LENGTH, validateUsername } from '../core/identifiers.js';
import type { UserRepository } from '../account/ports.js';

const SUFFIX_DIGITS = 4;
const ATTEMPTS = 5;

/** The characters a username may hold, everything else dropped; cut to leave room for a suffix. */
function usernameBase(suggestion: string): string {
  const kept = [...suggestion.normalize('NFKC')].filter((character) => /^[\p{L}\p{N}@.+_-]$/u.test(character));
  return kept.slice(0, USERNAME_MAX_LENGTH - SUFFIX_DIGITS).join('');
}

export async function availableUsername(users: Pick<UserRepository, 'findByUsername'>, suggestions: readonly string[]): Promise<string> {
  const base = suggestions.map(usernameBase).find((candidate) => candidate !== '') ?? 'user';
  if (!(await users.findByUsername(base))) return validateUsername(base);
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const candidate = `${base}${randomInt(10 ** (SUFFIX_DIGITS - 1), 10 ** SUFFIX_DIGITS)}`;
    if (!(await users.findByUsername(candidate))) return validateUsername(candidate);
  }
  // Astronomically unlikely with a fresh random suffix each time: a fully random name then.
  return validateUsername(`user${randomInt(10 ** 9, 10 ** 10)}`);
}
