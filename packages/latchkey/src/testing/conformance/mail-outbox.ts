import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../storage/database.js';
import type { OutboxMessage } from '../../mail/ports.js';
import { useFreshDatabase, type ConformanceTarget } from './harness.js';

const QUEUED = new Date('2030-01-01T10:00:00.000Z');
const minutes = (count: number): Date => new Date(QUEUED.getTime() + count * 60_000);

/** The repository keeps the sealed message as it is given (account/changes.ts seals it). */
function message(to: string): OutboxMessage {
  return { recipients: [to], subject: `[Site] Hello ${to}`, sealedMessage: `v1.sealed-message-for-${to}` };
}

export function describeMailOutboxRepository(target: ConformanceTarget): void {
  describe('mail outbox', () => {
    const database = useFreshDatabase(target);
    const outbox = () => database().store.mailOutbox;

    it('keeps a queued message whole until it is claimed, and forgets it once removed', async () => {
      const id = await outbox().add(message('ada@example.com'), QUEUED);
      expect(await outbox().list()).toEqual([
        { id, recipients: ['ada@example.com'], subject: '[Site] Hello ada@example.com', queuedAt: QUEUED, attempts: 0, nextAttemptAt: QUEUED, claimedUntil: null, lastError: null, abandonedAt: null },
      ]);
      expect(await outbox().claim(id, QUEUED, minutes(5))).toEqual({ id, sealedMessage: message('ada@example.com').sealedMessage, attempts: 0 });
      await outbox().remove(id);
      expect(await outbox().list()).toEqual([]);
      expect(await outbox().claim(id, minutes(10), minutes(15))).toBeUndefined();
    });

    it('lets one claim hold a row until it lapses', async () => {
      const id = await outbox().add(message('ada@example.com'), QUEUED);
      expect(await outbox().claim(id, QUEUED, minutes(5))).toBeDefined();
      expect(await outbox().claim(id, minutes(4), minutes(9))).toBeUndefined();
      expect(await outbox().claimNextDue(minutes(4), minutes(9), minutes(4))).toBeUndefined();
      // Its holder died: once the claim lapses, someone else may send it.
      expect(await outbox().claim(id, minutes(5), minutes(10))).toMatchObject({ id });
    });

    it('gives a sweep only rows left behind: due, unclaimed, and never tried only when queued long enough ago', async () => {
      const fresh = await outbox().add(message('fresh@example.com'), minutes(1));
      const old = await outbox().add(message('old@example.com'), QUEUED);
      const retried = await outbox().add(message('retried@example.com'), QUEUED);
      await outbox().claim(retried, QUEUED, minutes(5));
      await outbox().retryLater(retried, minutes(3), 'The mail server refused the message.');
      // At minute 2 rows queued before minute 1 count as left behind: only `old`; `retried` waits for minute 3.
      expect(await outbox().claimNextDue(minutes(2), minutes(7), minutes(1))).toMatchObject({ id: old, attempts: 0 });
      expect(await outbox().claimNextDue(minutes(2), minutes(7), minutes(1))).toBeUndefined();
      expect(await outbox().claimNextDue(minutes(3), minutes(8), minutes(1))).toMatchObject({ id: retried, attempts: 1 });
      expect(await outbox().claimNextDue(minutes(3), minutes(8), minutes(2))).toMatchObject({ id: fresh });
      const listed = await outbox().list();
      expect(listed.find((entry) => entry.id === retried)).toMatchObject({ attempts: 1, nextAttemptAt: minutes(3), claimedUntil: minutes(8), lastError: 'The mail server refused the message.' });
    });

    it('blanks the body of an abandoned row and never hands it out again', async () => {
      const id = await outbox().add(message('ada@example.com'), QUEUED);
      await outbox().claim(id, QUEUED, minutes(5));
      await outbox().abandon(id, minutes(1), 'Mailbox unavailable');
      expect(await outbox().list()).toEqual([expect.objectContaining({ id, recipients: ['ada@example.com'], attempts: 1, claimedUntil: null, lastError: 'Mailbox unavailable', abandonedAt: minutes(1) })]);
      expect(await outbox().claim(id, minutes(60), minutes(65))).toBeUndefined();
      expect(await outbox().claimNextDue(minutes(60), minutes(65), minutes(60))).toBeUndefined();
      const { kysely } = database();
      const row = await kysely.selectFrom('latchkey_mail_outbox').select('message').where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.message).toBe('');
    });

    it('removes only the rows abandoned before a cutoff', async () => {
      const abandoned = [await outbox().add(message('ada@example.com'), QUEUED), await outbox().add(message('bob@example.com'), QUEUED)];
      const waiting = await outbox().add(message('cy@example.com'), QUEUED);
      await outbox().abandon(abandoned[0]!, minutes(1), 'Mailbox unavailable');
      await outbox().abandon(abandoned[1]!, minutes(10), 'Mailbox unavailable');
      expect(await outbox().removeAbandonedBefore(minutes(10))).toBe(1);
      expect((await outbox().list()).map((entry) => entry.id)).toEqual([abandoned[1], waiting]);
      expect(await outbox().removeAbandonedBefore(minutes(60))).toBe(1);
      expect((await outbox().list()).map((entry) => entry.id)).toEqual([waiting]);
    });

    it('rolls a queued row back with the transaction that wrote it', async () => {
      const { store } = database();
      await expect(
        store.transaction(async (repositories) => {
          await repositories.mailOutbox.add(message('ada@example.com'), QUEUED);
          throw new Error('the change failed after its mail was queued');
        }),
      ).rejects.toThrow('the change failed');
      expect(await outbox().list()).toEqual([]);
    });

    it('lets exactly one of two instances claim a row, and gives two racing sweeps different rows', async () => {
      const first = database();
      // A second connection (pool) on the same database: another instance. In-memory SQLite cannot
      // be opened twice; there the one connection serializes the claims, which is the same contest.
      const second = target.kind === 'postgres' ? await openDatabase(first.openOptions) : first;
      try {
        const ids: number[] = [];
        for (const to of ['a', 'b', 'c', 'd']) ids.push(await first.store.mailOutbox.add(message(`${to}@example.com`), QUEUED));
        const claims = await Promise.all([first.store.mailOutbox.claim(ids[0]!, QUEUED, minutes(5)), second.store.mailOutbox.claim(ids[0]!, QUEUED, minutes(5))]);
        expect(claims.filter((claim) => claim !== undefined)).toHaveLength(1);
        const swept = await Promise.all(
          // At minute 3 the first row's claim (until minute 5) still holds: the sweeps share the other three.
          [first, second, first, second].map((instance) => instance.store.mailOutbox.claimNextDue(minutes(3), minutes(8), minutes(3))),
        );
        const sweptIds = swept.map((mail) => mail?.id).filter((id) => id !== undefined);
        expect(new Set(sweptIds).size).toBe(sweptIds.length);
        expect(sweptIds.sort((a, b) => a - b)).toEqual(ids.slice(1));
      } finally {
        if (second !== first) await second.close();
      }
    });
  });
}
