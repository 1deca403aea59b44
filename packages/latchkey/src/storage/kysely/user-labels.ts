import { sql, type RawBuilder } from 'kysely';
import type { UserLabel } from '../../account/ports.js';
import type { UsernameType } from '../../config/settings.js';
import { normalizeUsernameKey } from '../../core/identifiers.js';
import { startsWith } from './like.js';

/**
 * For the admin's lists of things users own (sessions, API tokens, authenticators), each read with
 * its user joined as `u`: the search by the start of the user's email, or of their username where
 * the project has usernames (folded as usernames are compared), LIKE's wildcards escaped.
 */
export function userStartsWith(text: string, usernameType: UsernameType): RawBuilder<boolean> {
  const byEmail = startsWith('u.email', text.toLowerCase());
  if (usernameType !== 'username') return byEmail;
  return sql<boolean>`(${byEmail} or ${startsWith('u.username_key', normalizeUsernameKey(text))})`;
}

/**
 * The joined user's login names, read as `user_email` and (only where the column exists: projects
 * with usernames) `user_username`.
 */
export function userLabelOf(row: { user_id: number; user_email: string; user_username?: string | null }): UserLabel {
  return { id: row.user_id, username: row.user_username ?? null, email: row.user_email };
}
