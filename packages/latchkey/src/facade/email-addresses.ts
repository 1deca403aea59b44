import { commitChange } from '../account/changes.js';
import type { EmailAddress, User } from '../account/model.js';
import type { ClientInfo } from '../core/client.js';
import { LatchkeyError } from '../core/errors.js';
import { validateEmail } from '../core/identifiers.js';
import type { LatchkeyDeps } from '../deps.js';
import { NO_CLIENT } from '../tokens/api-tokens.js';

/** The project's way to the users' addresses (allauth's EmailAddress). */
export interface LatchkeyEmailAddresses {
  /** The user's addresses, primary first. */
  listForUser(user: Pick<User, 'id'>): Promise<EmailAddress[]>;
  /** The verified address and whose it is; undefined when nobody has verified it. */
  findVerified(email: string): Promise<EmailAddress | undefined>;
  /**
   * Adds an address to the user (not primary) by code, recorded as email_added: one that came
   * verified from elsewhere, or one to confirm through the email page. Throws LatchkeyError
   * 'invalid_email', or 'email_taken' when another account has it verified.
   */
  add(user: Pick<User, 'id'>, email: string, options: { verified: boolean; client?: ClientInfo }): Promise<EmailAddress>;
}

export function emailAddressesOf(deps: LatchkeyDeps): LatchkeyEmailAddresses {
  return {
    listForUser: (user) => deps.store.emailAddresses.listForUser(user.id),
    findVerified: (email) => deps.store.emailAddresses.findVerified(email),
    async add(user, email, options) {
      const address = validateEmail(email);
      // The database keeps a verified address to one account; an unverified claim of one would be
      // allowed there (a person may claim it and lose the race), but code adding it means a mistake.
      const holder = await deps.store.emailAddresses.findVerified(address);
      if (holder !== undefined && holder.userId !== user.id) {
        throw new LatchkeyError('email_taken', 'A user is already registered with this email address.', { param: 'email' });
      }
      return commitChange(deps, async (change) => {
        const added = await change.repositories.emailAddresses.add({ userId: user.id, email: address, verified: options.verified, primary: false });
        await change.record('email_added', user.id, options.client ?? NO_CLIENT, { email: added.email });
        return added;
      });
    },
  };
}
