import { LatchkeyError } from '../core/errors.js';
import type { EmailMessage, SentEmail } from './ports.js';

const LINE_BREAK = /[\r\n]/;
// RFC 5322 section 3.6.8: a field name is printable ASCII except the colon.
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Refuses a message that would let a value break out of its header, and resolves the sender.
 *
 * Every backend calls this, so a test against the memory backend refuses the same messages that
 * production SMTP would. nodemailer is not an injection risk on its own: it replaces CR and LF with
 * spaces in plain header values (subject and custom headers), parses address headers into addresses,
 * and rejects an envelope address containing CR, LF, < or > (EENVELOPE). We refuse instead of relying
 * on that, because a line break in a subject or an address is either a bug in our code or an attack
 * through user input (a display name, an email field), and silently sending a mangled message would
 * hide both. We refuse rather than strip for the same reason.
 */
export function prepareEmail(message: EmailMessage, defaultFrom: string): SentEmail {
  const from = message.from ?? defaultFrom;
  if (message.to.length === 0) {
    throw new LatchkeyError('invalid_input', 'An email needs at least one recipient.', { param: 'to' });
  }
  refuseLineBreak('from', from);
  for (const address of message.to) {
    refuseLineBreak('to', address);
  }
  refuseLineBreak('subject', message.subject);
  const headers = { ...message.headers };
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) {
      throw new LatchkeyError('invalid_input', `Email header name ${JSON.stringify(name)} is not a valid field name.`, {
        param: 'headers',
      });
    }
    refuseLineBreak('headers', value);
  }
  return { from, to: [...message.to], subject: message.subject, text: message.text, html: message.html, headers };
}

function refuseLineBreak(field: 'from' | 'to' | 'subject' | 'headers', value: string): void {
  if (LINE_BREAK.test(value)) {
    // The value itself stays out of the message: it may be attacker-controlled and is not needed to debug.
    throw new LatchkeyError('invalid_input', `Email ${field} contains a line break; refusing to send.`, { param: field });
  }
}
