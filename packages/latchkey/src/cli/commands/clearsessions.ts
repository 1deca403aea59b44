// `manage clearsessions`, as Django's: expired sessions stay in the store until removed, so a
// deployment runs this daily.
import { createDatabaseOneTimeClaimStore } from '../../storage/kysely/one-time-claim-store.js';
import { createDatabaseCounterStore } from '../../storage/kysely/counter-store.js';
import { withLatchkey, type CommandContext } from '../command.js';

export async function clearsessions(context: CommandContext): Promise<number> {
  const { io } = context;
  const [removed, counters, claims] = await withLatchkey(context, async (latchkey) => [
    await latchkey.deps.sessions.deleteExpired(),
    // Rate-limit counters and one-time claims kept in the database expire in place, and stay until
    // removed here; Redis drops its own.
    await createDatabaseCounterStore(latchkey.database.kysely).deleteExpired(latchkey.deps.clock.now()),
    await createDatabaseOneTimeClaimStore(latchkey.database.kysely).deleteExpired(latchkey.deps.clock.now()),
  ]);
  io.stdout.write(`Removed ${removed} expired session(s), ${counters} expired rate-limit counter(s) and ${claims} expired one-time claim(s).\n`);
  return 0;
}
