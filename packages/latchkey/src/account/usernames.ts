/**
 * A username made for a new account whose signup gave none, in a project whose users have
 * usernames: AccountAdapter.populateUsername's default (allauth's populate_username and
 * generate_unique_username). The first suggestion that keeps any character a username may hold,
 * made valid, with a number added when it is taken. The person can change it afterwards.
 */
import { randomInt } from 'node:crypto';
import { USERNAME_MAX_LENGTH, validateUsername } from '../core/identifiers.js';

const SUFFIX_DIGITS = 4;
const ATTEMPTS = 5;

/** Whether an account has this username (as people type it: case and width folded). */
export type UsernameTaken = (username: string) => Promise<boolean>;

/** The characters a username may hold, everything else dropped; cut to leave room for a suffix. */
function usernameBase(suggestion: string): string {
  const kept = [...suggestion.normalize('NFKC')].filter((character) => /^[\p{L}\p{N}@.+_-]$/u.test(character));
  return kept.slice(0, USERNAME_MAX_LENGTH - SUFFIX_DIGITS).join('');
}

/** A free, valid username from the first usable suggestion ('user' when none is), with a random number added when it is taken. */
export async function availableUsername(isTaken: UsernameTaken, suggestions: readonly string[]): Promise<string> {
  const base = suggestions.map(usernameBase).find((candidate) => candidate !== '') ?? 'user';
  if (!(await isTaken(base))) return validateUsername(base);
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const candidate = `${base}${randomInt(10 ** (SUFFIX_DIGITS - 1), 10 ** SUFFIX_DIGITS)}`;
    if (!(await isTaken(candidate))) return validateUsername(candidate);
  }
  // Astronomically unlikely with a fresh random suffix each time: a fully random name then.
  return validateUsername(`user${randomInt(10 ** 9, 10 ** 10)}`);
}
