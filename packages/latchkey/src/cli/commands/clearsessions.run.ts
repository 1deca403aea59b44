// What `manage clearsessions` does (its command line is declared in clearsessions.ts).
import { createDatabaseOneTimeClaimStore } from '../../storage/kysely/one-time-claim-store.js';
import { createDatabaseCounterStore } from '../../storage/kysely/counter-store.js';
import { withLatchkey, type CommandContext } from '../command.js';
import { ABANDONED_MAIL_KEPT_DAYS } from './shared-names.js';

export async function run(context: CommandContext): Promise<number> {
  const [removed, counters, claims, mails] = await withLatchkey(context, async (latchkey) => [
    await latchkey.deps.sessions.deleteExpired(),
    // Rate-limit counters and one-time claims kept in the database expire in place, and stay until
    // removed here; Redis drops its own.
    await createDatabaseCounterStore(latchkey.database.kysely, latchkey.database.dialect).deleteExpired(latchkey.deps.clock.now()),
    await createDatabaseOneTimeClaimStore(latchkey.database.kysely).deleteExpired(latchkey.deps.clock.now()),
    await latchkey.database.store.mailOutbox.removeAbandonedBefore(new Date(latchkey.deps.clock.now().getTime() - ABANDONED_MAIL_KEPT_DAYS * 86_400_000)),
  ]);
  context.io.stdout.write(
    `Removed ${removed} expired session(s), ${counters} expired rate-limit counter(s), ${claims} expired one-time claim(s) and ${mails} mail(s) given up on over ${ABANDONED_MAIL_KEPT_DAYS} days ago.\n`,
  );
  return 0;
}
