import type { AddressInfo } from 'node:net';
import { simpleParser, type HeaderValue } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

/** A message as the test SMTP server received it: the SMTP envelope plus the parsed MIME message. */
export interface ReceivedEmail {
  envelope: { from: string; to: string[] };
  subject: string;
  text: string;
  /** The HTML part, or undefined when the message had none. */
  html: string | undefined;
  /** Decoded header values by lower-case name (`subject`, `from`, `to`, `x-custom`...). */
  headers: Record<string, string>;
  /** The message exactly as it crossed the wire, for assertions about encoding or header lines. */
  raw: string;
}

/** How startTestSmtpServer's server behaves: refusing mail, requiring credentials, the address it listens on. */
export interface TestSmtpServerOptions {
  /** Refuse every message with this SMTP reply code (e.g. 550 permanent, 451 temporary). */
  failWith?: number;
  /** Require these credentials (AUTH PLAIN or LOGIN) before accepting mail. */
  auth?: { user: string; pass: string };
  /**
   * The local address to listen on; 127.0.0.1 when left out. Another address of this machine
   * (not a loopback one) lets a test see what a client does with a server across a network.
   */
  host?: string;
}

/** A running test SMTP server: its URL for EMAIL_URL, the mail it received, and close() for the end of the test. */
export interface TestSmtpServer {
  /** An EMAIL_URL for this server, without credentials: `smtp://127.0.0.1:PORT` (or `host`). */
  url: string;
  port: number;
  /** Every accepted message, in order of arrival. */
  messages: ReceivedEmail[];
  /**
   * The user name of every AUTH attempt, accepted or refused, in order: a test can check that
   * credentials were never sent at all.
   */
  authAttempts: string[];
  /**
   * Resolves with the messages once at least `count` have arrived. A message is already in `messages`
   * when the client's send resolves (the server answers only after parsing it); wait for mail sent in
   * the background, e.g. by a flow that does not await its email.
   */
  waitForMessages(count: number, timeoutMs?: number): Promise<ReceivedEmail[]>;
  /** Forgets the messages and AUTH attempts received so far. */
  clear(): void;
  close(): Promise<void>;
}

/**
 * Starts a real SMTP server on 127.0.0.1 (or `host`) on a free port, so tests exercise the same
 * nodemailer code path as production. Plain text only: STARTTLS is disabled. A client accepts that
 * and authenticates in clear only on a loopback address; elsewhere Latchkey's mailer refuses to.
 */
export async function startTestSmtpServer(options: TestSmtpServerOptions = {}): Promise<TestSmtpServer> {
  const messages: ReceivedEmail[] = [];
  const authAttempts: string[] = [];
  const waiters = new Set<() => void>();
  const { auth, failWith, host = '127.0.0.1' } = options;

  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: auth === undefined,
    logger: false,
    // A pooled client may still hold a connection when the test ends; do not wait 30 s for it.
    closeTimeout: 100,
    onAuth(credentials, _session, callback) {
      authAttempts.push(credentials.username ?? '');
      if (auth === undefined || (credentials.username === auth.user && credentials.password === auth.pass)) {
        callback(null, { user: credentials.username ?? '' });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onMailFrom(_address, _session, callback) {
      callback(failWith === undefined ? null : smtpError(failWith, 'Message refused by the test server'));
    },
    onData(stream, session, callback) {
      const envelope = {
        from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
        to: session.envelope.rcptTo.map((recipient) => recipient.address),
      };
      receive(stream).then(
        (email) => {
          messages.push({ envelope, ...email });
          for (const wake of waiters) wake();
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    messages,
    authAttempts,
    waitForMessages(count, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (messages.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve([...messages]);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`Expected ${count} email(s) within ${timeoutMs} ms; received ${messages.length}.`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    clear() {
      messages.length = 0;
      authAttempts.length = 0;
    },
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function receive(stream: SMTPServerDataStream): Promise<Omit<ReceivedEmail, 'envelope'>> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const parsed = await simpleParser(raw);
  const headers: Record<string, string> = {};
  for (const [name, value] of parsed.headers) headers[name] = headerValueToString(value);
  return {
    subject: parsed.subject ?? '',
    // mailparser keeps the line break that ends the body; the sender did not write it.
    text: (parsed.text ?? '').replace(/\n$/, ''),
    html: parsed.html === false ? undefined : parsed.html,
    headers,
    raw: raw.toString('utf8'),
  };
}

function headerValueToString(value: HeaderValue): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) {
    return value.map((item) => (typeof item === 'string' ? item : item.value)).join(', ');
  }
  if ('text' in value) return value.text;
  const params = Object.entries(value.params).map(([key, param]) => `; ${key}=${param}`);
  return value.value + params.join('');
}

function smtpError(responseCode: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode });
}
