import { LatchkeyError } from '../core/errors.js';
import { prepareEmail } from './message.js';
import { type EmailMessage, type Mailer, type SentEmail } from './ports.js';

// Django's console backend ends each message with a line of 79 dashes; developers know the look.
const SEPARATOR = '-'.repeat(79);

/**
 * Prints each message to a stream instead of sending it (EMAIL_URL=console:), for local development:
 * the developer copies the verification or reset link from the terminal.
 */
export class ConsoleMailer implements Mailer {
  private readonly defaultFrom: string;
  private readonly output: NodeJS.WritableStream;

  constructor(options: { defaultFrom: string; output?: NodeJS.WritableStream }) {
    this.defaultFrom = options.defaultFrom;
    this.output = options.output ?? process.stdout;
  }

  async send(message: EmailMessage): Promise<void> {
    const email = prepareEmail(message, this.defaultFrom);
    const text = formatEmailForConsole(email);
    await new Promise<void>((resolve, reject) => {
      this.output.write(text, (error) => {
        if (error) {
          reject(new LatchkeyError('mail_failed', 'Could not write the email to the console.', { cause: error }));
        } else {
          resolve();
        }
      });
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Headers first, a blank line, the text body, then the separator; the HTML part is only mentioned. */
export function formatEmailForConsole(email: SentEmail): string {
  const lines = [`From: ${email.from}`, `To: ${email.to.join(', ')}`, `Subject: ${email.subject}`];
  for (const [name, value] of Object.entries(email.headers)) {
    lines.push(`${name}: ${value}`);
  }
  lines.push('', email.text.replace(/\r\n/g, '\n').replace(/\n$/, ''));
  if (email.html !== undefined) {
    lines.push('', `[HTML alternative, ${email.html.length} characters, not shown]`);
  }
  lines.push(SEPARATOR, '');
  return lines.join('\n');
}
