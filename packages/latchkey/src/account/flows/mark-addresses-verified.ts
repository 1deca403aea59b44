/**
 * allauth's admin action "Mark selected email addresses as verified", for the admin's email
 * address list (and any later admin API): the permission is checked here, not only by the page.
 */
import { refusalToActOn, requireAdminPermission } from '../../admin/access.js';
import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import { commitChange } from '../changes.js';
import { voidOtherClaims } from '../email-confirmation.js';
import type { EmailAddress, User } from '../model.js';

/** What became of each selected address. */
export interface AddressesVerified {
  /** Marked verified now; each got an email_confirmed event. */
  verified: EmailAddress[];
  /** Verified already: left as they were, with no event (allauth's action passes over them too). */
  alreadyVerified: EmailAddress[];
  /** Left unverified because another user has verified the same address. */
  taken: EmailAddress[];
  /**
   * Left unverified because their user is one the staff member may not act on (a superuser, or
   * staff who hold more: admin/access.ts): whoever holds a verified address can reset its password.
   */
  outOfReach: EmailAddress[];
  /** Ids that name no address (removed meanwhile). */
  missing: number[];
}

/**
 * Marks each address verified, one at a time, so that one refusal does not undo the rest: an
 * address another user has already verified stays unverified and is reported in `taken`. A
 * verification here counts as proof, as a confirmation link does: the other accounts that merely
 * claimed the address lose the claim in the same transaction (voidOtherClaims). Each address
 * marked verified emits 'email_confirmed' for its user, as allauth's admin action sends
 * email_confirmed, with `by: 'admin'` and the staff member's id in its data.
 *
 * Only staff who may change email addresses may ('permission_denied'), and only the addresses of
 * users they may act on: the others are left alone and reported in `outOfReach`.
 */
export async function markAddressesVerified(
  deps: Pick<LatchkeyDeps, 'store' | 'events' | 'clock' | 'mailOutbox'>,
  actor: User,
  ids: readonly number[],
  client: ClientInfo,
): Promise<AddressesVerified> {
  const granted = await requireAdminPermission(deps, actor, 'account.emailaddress', 'change');
  const result: AddressesVerified = { verified: [], alreadyVerified: [], taken: [], outOfReach: [], missing: [] };
  for (const id of new Set(ids)) {
    const address = await deps.store.emailAddresses.findById(id);
    if (!address) {
      result.missing.push(id);
      continue;
    }
    if (address.verified) {
      result.alreadyVerified.push(address);
      continue;
    }
    const user = await deps.store.users.findById(address.userId);
    if (!user) {
      result.missing.push(id);
      continue;
    }
    if ((await refusalToActOn(deps, granted, user)) !== undefined) {
      result.outOfReach.push(address);
      continue;
    }
    try {
      // The address, the claims it voids and its email_confirmed record: one transaction.
      const verified = await commitChange(deps, async (change) => {
        const marked = await change.repositories.emailAddresses.markVerified(id);
        if (!marked) return undefined;
        await voidOtherClaims(change.repositories, marked);
        await change.record('email_confirmed', marked.userId, client, { email: marked.email, by: 'admin', staff: actor.id });
        return marked;
      });
      if (verified) result.verified.push(verified);
      else result.missing.push(id);
    } catch (error) {
      if (!isLatchkeyError(error, 'email_taken')) throw error;
      result.taken.push(address);
    }
  }
  return result;
}
