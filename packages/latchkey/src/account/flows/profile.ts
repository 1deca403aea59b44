import type { ClientInfo } from '../../core/client.js';
import { LatchkeyError } from '../../core/errors.js';
import { cleanName } from '../names.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { User } from '../model.js';

export interface UpdateProfileInput {
  user: User;
  /** The new name, as typed; cleanName decides what is stored. */
  name: string;
  /**
   * Who asked. Not recorded yet: account/events.ts has no event for a profile change (allauth
   * defines none either), and a flow does not write the audit log around the event bus.
   */
  client: ClientInfo;
}

/**
 * Changes what a person may change about their own account: today, the display name (the only
 * writable field of cookiecutter-django's user API). The identifier is not: a username or
 * address change has flows of its own (uniqueness, verification). Returns the stored user;
 * 'not_found' when the account was deleted meanwhile, so nothing is written for a ghost.
 */
export async function updateProfile(deps: Pick<LatchkeyDeps, 'store'>, input: UpdateProfileInput): Promise<User> {
  const name = cleanName(input.name);
  const updated = await deps.store.users.update(input.user.id, { name });
  if (updated === undefined) throw new LatchkeyError('not_found', 'This account no longer exists.');
  return updated;
}
