import type { Clock } from '../core/clock.js';
import { openJson, sealJson } from '../core/encryption.js';
import type { EmailMessage, MailOutbox, MailOutboxRepository, MailOutcome, Mailer, OutboxMail, OutboxMessage } from './ports.js';

/** How queued messages are sealed (core/encryption.ts): under a key for this purpose alone. */
const SEAL_PURPOSE = 'mail-outbox';
const SEAL_ASSOCIATED_DATA = 'latchkey mail outbox';

/** The timings of the mail outbox's retries (createLatchkey's `mailOutbox.policy`): how long a claim holds, when to try again, when to give up. */
export interface MailOutboxPolicy {
  /**
   * How long a claim keeps others off a row: longer than any one send can take (the SMTP timeouts
   * add up to 20 s), so that a slow sender is never overtaken and its mail sent twice. A sender that
   * died holding a claim leaves the row to the first sweep after it lapses.
   */
  claimMs: number;
  /**
   * How long after its commit a mail nobody has tried yet counts as left behind. The instance that
   * queued it sends it itself a moment after its commit; a sweep taking it sooner would race that
   * instance, and the flow could not say whether its mail went.
   */
  leftBehindAfterMs: number;
  /** The wait after the first failed attempt; it doubles with each further one, up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** After this many failed attempts the outbox gives up on a mail (and blanks its body). */
  maxAttempts: number;
  /** The most mails one sweep sends; the next sweep carries on. */
  sweepLimit: number;
}

/** About a day of trying (1, 2, 4, ... minutes, then hourly) before giving up. */
export const DEFAULT_MAIL_OUTBOX_POLICY: MailOutboxPolicy = {
  claimMs: 5 * 60_000,
  leftBehindAfterMs: 30_000,
  retryBaseMs: 60_000,
  retryMaxMs: 60 * 60_000,
  maxAttempts: 30,
  sweepLimit: 100,
};

export interface MailOutboxSenderOptions {
  repository: MailOutboxRepository;
  mailer: Mailer;
  clock: Clock;
  /** LATCHKEY_SECRET_KEY, under which the queued messages are sealed. */
  secretKey: string;
  policy?: Partial<MailOutboxPolicy>;
  /** Told of a mail that could not be sent, or of the outbox's own storage failing (never a body); default the console. */
  log?: { error(message: string): void };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Sends what the outbox holds (MailOutbox). Each send claims its row first, so that of several
 * instances on one database exactly one sends a given mail; a sent mail's row is deleted, since it
 * holds live links (confirmation and reset keys) that should not stay at rest once delivered.
 * Delivery is at least once: should a process die after the mail server accepted a message but
 * before the row is deleted, the mail goes again once the claim lapses. A second copy of a notice
 * is the lesser harm next to a lost one.
 */
export class MailOutboxSender implements MailOutbox {
  private readonly repository: MailOutboxRepository;
  private readonly mailer: Mailer;
  private readonly clock: Clock;
  private readonly secretKey: string;
  private readonly policy: MailOutboxPolicy;
  private readonly log: { error(message: string): void };
  private readonly inFlight = new Set<Promise<unknown>>();
  private sweeping: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: MailOutboxSenderOptions) {
    this.repository = options.repository;
    this.mailer = options.mailer;
    this.clock = options.clock;
    this.secretKey = options.secretKey;
    this.policy = { ...DEFAULT_MAIL_OUTBOX_POLICY, ...options.policy };
    this.log = options.log ?? console;
  }

  private reportFailure(error: unknown, mailId: number | undefined): void {
    this.log.error(`Mail outbox: mail ${mailId ?? '-'} not sent: ${describe(error)}`);
  }

  seal(message: EmailMessage): OutboxMessage {
    return { recipients: message.to, subject: message.subject, sealedMessage: sealJson(this.secretKey, SEAL_PURPOSE, message, SEAL_ASSOCIATED_DATA) };
  }

  deliver(id: number): Promise<MailOutcome> {
    return this.track(this.deliverNow(id));
  }

  sweep(): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    // One sweep at a time per process: a second caller waits for the one running.
    this.sweeping ??= this.track(this.sweepNow()).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Sweeps every `intervalMs` until close(); the timer does not keep the process alive. */
  sweepEvery(intervalMs: number, run: (sweep: () => Promise<number>) => void = (sweep) => void sweep()): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => run(() => this.sweep()), intervalMs);
    this.timer.unref();
  }

  /** Stops sweeping and waits for every send under way, so that shutdown loses none half-done. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async deliverNow(id: number): Promise<MailOutcome> {
    const now = this.clock.now();
    let mail: OutboxMail | undefined;
    try {
      mail = await this.repository.claim(id, now, this.after(now, this.policy.claimMs));
    } catch (error) {
      // The row is committed: a later sweep sends it.
      return { status: 'failed', error };
    }
    // Already taken by a sweep (this instance was slower than leftBehindAfterMs) or sent: it is on its way.
    if (mail === undefined) return { status: 'sent' };
    return this.send(mail);
  }

  private async sweepNow(): Promise<number> {
    let sent = 0;
    for (let taken = 0; taken < this.policy.sweepLimit && !this.closed; taken += 1) {
      const now = this.clock.now();
      let mail: OutboxMail | undefined;
      try {
        mail = await this.repository.claimNextDue(now, this.after(now, this.policy.claimMs), this.after(now, -this.policy.leftBehindAfterMs));
      } catch (error) {
        this.reportFailure(error, undefined);
        break;
      }
      if (mail === undefined) break;
      const outcome = await this.send(mail);
      if (outcome.status === 'sent') sent += 1;
      else if (outcome.status === 'failed') this.reportFailure(outcome.error, mail.id);
    }
    return sent;
  }

  /**
   * The message a row holds. A row queued before messages were sealed holds it as plain JSON, and
   * is still sent. One that does not open (the secret key was changed since it was queued) never
   * will: the outbox gives up on it at once, with a reason the operator can act on.
   */
  private open(mail: OutboxMail): EmailMessage | undefined {
    if (mail.sealedMessage.startsWith('{')) return JSON.parse(mail.sealedMessage) as EmailMessage;
    return openJson(this.secretKey, SEAL_PURPOSE, mail.sealedMessage, SEAL_ASSOCIATED_DATA) as EmailMessage | undefined;
  }

  private async send(mail: OutboxMail): Promise<MailOutcome> {
    const message = this.open(mail);
    if (message === undefined) {
      const error = new Error('The queued message does not open under LATCHKEY_SECRET_KEY: it was queued under a secret key since changed.');
      await this.repository.abandon(mail.id, this.clock.now(), error.message).catch((storageError: unknown) => this.reportFailure(storageError, mail.id));
      return { status: 'failed', error };
    }
    try {
      await this.mailer.send(message);
    } catch (error) {
      await this.recordFailure(mail, error).catch((storageError: unknown) => this.reportFailure(storageError, mail.id));
      return { status: 'failed', error };
    }
    // Should the delete fail, the claim lapses and the mail goes again: at least once, as above.
    await this.repository.remove(mail.id).catch((error: unknown) => this.reportFailure(error, mail.id));
    return { status: 'sent' };
  }

  private async recordFailure(mail: OutboxMail, error: unknown): Promise<void> {
    const now = this.clock.now();
    const failed = mail.attempts + 1;
    if (failed >= this.policy.maxAttempts) return this.repository.abandon(mail.id, now, describe(error));
    const wait = Math.min(this.policy.retryMaxMs, this.policy.retryBaseMs * 2 ** (failed - 1));
    return this.repository.retryLater(mail.id, this.after(now, wait), describe(error));
  }

  private after(now: Date, milliseconds: number): Date {
    return new Date(now.getTime() + milliseconds);
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    // Tracking must not turn a failure into an unhandled rejection; the caller sees it.
    void work.finally(() => this.inFlight.delete(work)).catch(() => undefined);
    return work;
  }
}
