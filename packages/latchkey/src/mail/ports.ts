/** An email as the flows compose it, before any backend sees it. */
export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
  /** The sender; DEFAULT_FROM_EMAIL when left out. */
  from?: string;
  headers?: Record<string, string>;
}

/** An email as a backend hands it on: the sender is resolved and nothing is optional but `html`. */
export interface SentEmail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | undefined;
  headers: Record<string, string>;
}

/** The mail port. Flows depend on this interface only; `createMailer` picks the backend from EMAIL_URL. */
export interface Mailer {
  /** Resolves once the backend has accepted the message; throws LatchkeyError('mail_failed') otherwise. */
  send(message: EmailMessage): Promise<void>;
  /** Releases connections (the SMTP pool); the process may keep running until this is called. */
  close(): Promise<void>;
}

/**
 * What became of a mail a flow sends after its change. A flow never fails over one: by the time
 * it is sent the change has happened, and telling the person "error" would make them think it had
 * not. The adapter logs a failure; a mail from the outbox is tried again later (MailOutbox).
 */
export type MailOutcome = { status: 'sent' } | { status: 'skipped' } | { status: 'failed'; error: unknown };

/**
 * A mail as the outbox keeps it: to whom and about what in clear, for the operator's list; the
 * message itself (with its live links and codes) sealed under LATCHKEY_SECRET_KEY
 * (MailOutbox.seal), so a copy of the database alone yields none of them.
 */
export interface OutboxMessage {
  recipients: string[];
  subject: string;
  sealedMessage: string;
}

/** A queued mail, as the one who claimed it reads it. */
export interface OutboxMail {
  id: number;
  sealedMessage: string;
  /** The attempts made before this one. */
  attempts: number;
}

/** A row of the outbox as an operator or a test sees it: never its body. */
export interface OutboxEntry {
  id: number;
  recipients: string[];
  subject: string;
  queuedAt: Date;
  attempts: number;
  nextAttemptAt: Date;
  claimedUntil: Date | null;
  lastError: string | null;
  /** When the outbox gave up on it (its body is then blanked); null while it is still tried. */
  abandonedAt: Date | null;
}

/**
 * The mail outbox (table latchkey_mail_outbox): a mail is written in the transaction of the change
 * it tells of, so that a crash loses neither, and sent after the commit. Rows hold rendered bodies
 * with live links (confirmation and reset keys): a row is deleted once sent, and its body blanked
 * when the outbox gives up on it.
 */
export interface MailOutboxRepository {
  /** Queues a rendered, sealed message; returns its id. */
  add(message: OutboxMessage, queuedAt: Date): Promise<number>;
  /**
   * Claims one row until `until`, unless it is gone, abandoned, or claimed by someone else whose
   * claim has not lapsed at `now`: of two racing claims, on one database, one wins.
   */
  claim(id: number, now: Date, until: Date): Promise<OutboxMail | undefined>;
  /**
   * Claims the oldest row a sweep should send: due (its next attempt at or before `now`),
   * unclaimed or its claim lapsed, and, for a row never tried, queued before `untriedBefore` (the
   * instance that queued it sends it itself right after its commit; a sweep is for rows left behind).
   */
  claimNextDue(now: Date, until: Date, untriedBefore: Date): Promise<OutboxMail | undefined>;
  /** The mail went: the row goes, and with it the only stored copy of its links. */
  remove(id: number): Promise<void>;
  /** An attempt failed: counted, the claim released, due again at `retryAt`. */
  retryLater(id: number, retryAt: Date, error: string): Promise<void>;
  /** The last attempt failed: the body is blanked, the rest kept for the operator. */
  abandon(id: number, at: Date, error: string): Promise<void>;
  /** Every row still waiting or abandoned, oldest first. */
  list(): Promise<OutboxEntry[]>;
  /** Removes the rows abandoned before `cutoff` (kept until then for the operator to see); returns how many. */
  removeAbandonedBefore(cutoff: Date): Promise<number>;
}

/** Sends what the outbox holds: one mail right after its commit, and the rows left behind. */
export interface MailOutbox {
  /** The message as the outbox stores it, sealed, for a change to queue in its transaction. */
  seal(message: EmailMessage): OutboxMessage;
  /** Sends the queued mail `id` now (a flow, right after its commit). Never throws. */
  deliver(id: number): Promise<MailOutcome>;
  /** Sends every row left behind that is due; resolves with how many went. Never throws. */
  sweep(): Promise<number>;
}
