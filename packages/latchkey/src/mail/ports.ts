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
