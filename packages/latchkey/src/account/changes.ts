import type { ClientInfo } from '../core/client.js';
import type { LatchkeyDeps } from '../deps.js';
import type { EmailMessage, MailOutcome } from '../mail/ports.js';
import type { Repositories } from '../store.js';
import type { AccountEvent, AccountEventName } from './events.js';

/** A mail queued in a change's transaction, to deliver once it has committed. */
export interface QueuedMail {
  readonly outboxId: number;
}

/** What the work of a change is handed: the transaction's repositories, and its records and mails. */
export interface ChangeWriter {
  readonly repositories: Repositories;
  /** Writes an audit record in the transaction; subscribers hear of it after the commit. */
  record(name: AccountEventName, userId: number | null, client: ClientInfo, data?: Record<string, unknown>): Promise<void>;
  /** Queues a mail in the transaction (the outbox); undefined in, undefined out (an account without an address). */
  queueMail(message: EmailMessage | undefined): Promise<QueuedMail | undefined>;
}

/**
 * Makes a change of the account as one transaction: its rows, the audit records saying it
 * happened and the mails telling of it are written together, so a crash leaves all of them or
 * none (never an account without its `user_signed_up` record, nor a password changed with its
 * notice lost). After the commit the subscribers hear of the events; the caller then delivers
 * each queued mail (deliverMail), and the outbox's sweep sends any that a crash or an outage left.
 * When `work` throws, nothing is written and nobody is told.
 */
export async function commitChange<T>(deps: Pick<LatchkeyDeps, 'store' | 'events' | 'clock' | 'mailOutbox'>, work: (change: ChangeWriter) => Promise<T>): Promise<T> {
  let events: AccountEvent[] = [];
  const value = await deps.store.transaction(async (repositories) => {
    events = [];
    return work({
      repositories,
      async record(name, userId, client, data = {}) {
        events.push(await deps.events.record(repositories.auditLog, name, userId, client, data));
      },
      async queueMail(message) {
        if (message === undefined) return undefined;
        return { outboxId: await repositories.mailOutbox.add(deps.mailOutbox.seal(message), deps.clock.now()) };
      },
    });
  });
  await deps.events.publish(events);
  return value;
}

/** Sends a mail queued by a committed change now; 'skipped' for none. Never throws. */
export function deliverMail(deps: Pick<LatchkeyDeps, 'mailOutbox'>, queued: QueuedMail | undefined): Promise<MailOutcome> {
  return queued === undefined ? Promise.resolve({ status: 'skipped' }) : deps.mailOutbox.deliver(queued.outboxId);
}
