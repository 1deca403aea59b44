import { maskUrlCredentials } from '../core/redact.js';
import { ConsoleMailer } from './console-mailer.js';
import { parseEmailUrl } from '../config/email-url.js';
import { MemoryMailer } from './memory-mailer.js';
import type { Mailer } from './ports.js';
import { SmtpMailer, type SmtpTimeouts } from './smtp-mailer.js';

export interface CreateMailerOptions {
  /** EMAIL_URL: smtp://[user:pass@]host:port, smtps://[user:pass@]host:port, console: or memory:. */
  url: string;
  /** DEFAULT_FROM_EMAIL: the sender of every message that names none. */
  defaultFrom: string;
  /** Where the console backend prints; process.stdout when left out. */
  output?: NodeJS.WritableStream;
  /** SMTP timeouts; DEFAULT_SMTP_TIMEOUTS when left out. Tests shorten them. */
  smtpTimeouts?: Partial<SmtpTimeouts>;
}

/** Builds the backend EMAIL_URL names; throws LatchkeyError('configuration_invalid') for anything else. */
export function createMailer(options: CreateMailerOptions): Mailer {
  const config = parseEmailUrl(options.url);
  switch (config.backend) {
    case 'console':
      return new ConsoleMailer({ defaultFrom: options.defaultFrom, output: options.output });
    case 'memory':
      return new MemoryMailer({ defaultFrom: options.defaultFrom });
    case 'smtp':
      return new SmtpMailer({
        host: config.host,
        port: config.port,
        implicitTls: config.implicitTls,
        user: config.user,
        password: config.password,
        defaultFrom: options.defaultFrom,
        description: maskUrlCredentials(options.url),
        timeouts: options.smtpTimeouts,
      });
  }
}
