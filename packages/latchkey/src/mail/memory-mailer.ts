import { prepareEmail } from './message.js';
import { type EmailMessage, type Mailer, type SentEmail } from './ports.js';

/**
 * Keeps every message in `outbox` instead of sending it (EMAIL_URL=memory:), like Django's locmem
 * backend. Tests read the outbox to follow links in verification and password-reset emails.
 */
export class MemoryMailer implements Mailer {
  readonly outbox: SentEmail[] = [];
  private readonly defaultFrom: string;

  constructor(options: { defaultFrom: string }) {
    this.defaultFrom = options.defaultFrom;
  }

  send(message: EmailMessage): Promise<void> {
    // A throw inside the executor becomes a rejection, so callers see failures the way the other backends report them.
    return new Promise((resolve) => {
      this.outbox.push(prepareEmail(message, this.defaultFrom));
      resolve();
    });
  }

  /** The most recent message sent to `address`, for tests that only care about the latest email. */
  lastTo(address: string): SentEmail | undefined {
    return this.outbox.findLast((email) => email.to.includes(address));
  }

  /** Empties the outbox between test cases without creating a new mailer. */
  clear(): void {
    this.outbox.length = 0;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
