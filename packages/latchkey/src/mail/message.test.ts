import { describe, expect, it } from 'vitest';
import { LatchkeyError } from '../core/errors.js';
import { prepareEmail } from './message.js';
import { type EmailMessage } from './ports.js';

const base: EmailMessage = { to: ['alice@example.com'], subject: 'Hello', text: 'Body' };

describe('prepareEmail', () => {
  it('fills in the default sender and copies what it keeps', () => {
    const to = ['alice@example.com'];
    const email = prepareEmail({ ...base, to }, 'webmaster@localhost');
    to.push('mallory@example.com');
    expect(email).toEqual({
      from: 'webmaster@localhost',
      to: ['alice@example.com'],
      subject: 'Hello',
      text: 'Body',
      html: undefined,
      headers: {},
    });
  });

  it('allows line breaks in the bodies', () => {
    expect(prepareEmail({ ...base, text: 'a\r\nb', html: '<p>a</p>\n<p>b</p>' }, 'x@example.com').text).toBe('a\r\nb');
  });

  it.each<[string, Partial<EmailMessage>, string]>([
    ['a subject with CRLF', { subject: 'Hi\r\nBcc: victim@example.com' }, 'subject'],
    ['a subject with a bare LF', { subject: 'Hi\nX-Evil: 1' }, 'subject'],
    ['a subject with a bare CR', { subject: 'Hi\rX-Evil: 1' }, 'subject'],
    ['a recipient with a line break', { to: ['alice@example.com\r\nBcc: victim@example.com'] }, 'to'],
    ['a second recipient with a line break', { to: ['alice@example.com', 'Bob\n<bob@example.com>'] }, 'to'],
    ['a sender with a line break', { from: 'Evil\r\n <evil@example.com>' }, 'from'],
    ['a header value with a line break', { headers: { 'X-Tag': 'a\r\nBcc: victim@example.com' } }, 'headers'],
    ['a header name with a colon', { headers: { 'Bcc: victim@example.com\r\nX-Tag': 'a' } }, 'headers'],
    ['no recipient', { to: [] }, 'to'],
  ])('refuses %s', (_name, change, param) => {
    let thrown: unknown;
    try {
      prepareEmail({ ...base, ...change }, 'webmaster@localhost');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LatchkeyError);
    expect(thrown).toMatchObject({ code: 'invalid_input', param });
  });

  it('refuses a default sender with a line break', () => {
    expect(() => prepareEmail(base, 'webmaster@localhost\r\nBcc: x@example.com')).toThrow(/from contains a line break/);
  });
});
