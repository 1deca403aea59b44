import type { Expression, ExpressionBuilder, Selectable, SqlBool } from 'kysely';
import type { MailOutboxRepository, OutboxEntry, OutboxMail, OutboxMessage } from '../../mail/ports.js';
import type { RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type DatabaseSchema, type MailOutboxTable } from './schema.js';

const TABLE = 'latchkey_mail_outbox';

/** Nobody holds the row at `now`: never claimed, released, or its claim lapsed (its holder died or hung). */
function unclaimedAt(now: Date) {
  // ISO 8601 strings of one format sort as the instants they denote (SQLite compares the TEXT);
  // PostgreSQL compares timestamptz values.
  return (eb: ExpressionBuilder<DatabaseSchema, typeof TABLE>): Expression<SqlBool> =>
    eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', toInstantColumn(now))]);
}

function toOutboxMail(row: Selectable<MailOutboxTable>): OutboxMail {
  return { id: row.id, sealedMessage: row.message, attempts: row.attempts };
}

function toEntry(row: Omit<Selectable<MailOutboxTable>, 'message'>): OutboxEntry {
  return {
    id: row.id,
    recipients: JSON.parse(row.recipients) as string[],
    subject: row.subject,
    queuedAt: fromInstantColumn(row.queued_at),
    attempts: row.attempts,
    nextAttemptAt: fromInstantColumn(row.next_attempt_at),
    claimedUntil: row.claimed_until === null ? null : fromInstantColumn(row.claimed_until),
    lastError: row.last_error,
    abandonedAt: row.abandoned_at === null ? null : fromInstantColumn(row.abandoned_at),
  };
}

/**
 * The outbox on either database. A claim is one UPDATE whose WHERE says "nobody holds it", so the
 * database decides between two instances claiming the same row: on SQLite there is one writer at
 * a time; on PostgreSQL the second UPDATE waits for the first to commit and then finds the row
 * claimed. A sweep picks its row with FOR UPDATE SKIP LOCKED on PostgreSQL, so two sweepers take
 * different rows instead of queueing behind one.
 */
export function createMailOutboxRepository({ db, dialect }: RepositoryContext): MailOutboxRepository {
  return {
    async add(message: OutboxMessage, queuedAt: Date): Promise<number> {
      const row = await db
        .insertInto(TABLE)
        .values({
          queued_at: toInstantColumn(queuedAt),
          recipients: JSON.stringify(message.recipients),
          subject: message.subject,
          message: message.sealedMessage,
          next_attempt_at: toInstantColumn(queuedAt),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    async claim(id: number, now: Date, until: Date): Promise<OutboxMail | undefined> {
      const row = await db
        .updateTable(TABLE)
        .set({ claimed_until: toInstantColumn(until) })
        .where('id', '=', id)
        .where('abandoned_at', 'is', null)
        .where(unclaimedAt(now))
        .returningAll()
        .executeTakeFirst();
      return row && toOutboxMail(row);
    },

    async claimNextDue(now: Date, until: Date, untriedBefore: Date): Promise<OutboxMail | undefined> {
      const next = db
        .selectFrom(TABLE)
        .select('id')
        .where('abandoned_at', 'is', null)
        .where('next_attempt_at', '<=', toInstantColumn(now))
        .where(unclaimedAt(now))
        .where((eb) => eb.or([eb('attempts', '>', 0), eb('queued_at', '<', toInstantColumn(untriedBefore))]))
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(1)
        .$if(dialect === 'postgres', (query) => query.forUpdate().skipLocked());
      const row = await db
        .updateTable(TABLE)
        .set({ claimed_until: toInstantColumn(until) })
        // `=`, not `in`: a scalar subquery runs once. PostgreSQL may run an `in` subquery again
        // for every row it scans, and each run would lock and claim one row more.
        .where('id', '=', next)
        // Asked again of the row itself: on PostgreSQL the subquery's snapshot may be older.
        .where('abandoned_at', 'is', null)
        .where(unclaimedAt(now))
        .returningAll()
        .executeTakeFirst();
      return row && toOutboxMail(row);
    },

    async remove(id: number): Promise<void> {
      await db.deleteFrom(TABLE).where('id', '=', id).execute();
    },

    async retryLater(id: number, retryAt: Date, error: string): Promise<void> {
      await db
        .updateTable(TABLE)
        .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: toInstantColumn(retryAt), claimed_until: null, last_error: error.slice(0, 1000) }))
        .where('id', '=', id)
        .execute();
    },

    async abandon(id: number, at: Date, error: string): Promise<void> {
      await db
        .updateTable(TABLE)
        .set((eb) => ({ attempts: eb('attempts', '+', 1), message: '', claimed_until: null, last_error: error.slice(0, 1000), abandoned_at: toInstantColumn(at) }))
        .where('id', '=', id)
        .execute();
    },

    async removeAbandonedBefore(cutoff: Date): Promise<number> {
      const result = await db.deleteFrom(TABLE).where('abandoned_at', '<', toInstantColumn(cutoff)).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async list(): Promise<OutboxEntry[]> {
      const rows = await db
        .selectFrom(TABLE)
        .select(['id', 'queued_at', 'recipients', 'subject', 'attempts', 'next_attempt_at', 'claimed_until', 'last_error', 'abandoned_at'])
        .orderBy('id')
        .execute();
      return rows.map(toEntry);
    },
  };
}
