import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleMailer } from './console-mailer.js';

function capture(): { output: PassThrough; written: () => string } {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { output, written: () => Buffer.concat(chunks).toString('utf8') };
}

describe('ConsoleMailer', () => {
  it('prints From, To, Subject, the text body and a separator', async () => {
    const { output, written } = capture();
    const mailer = new ConsoleMailer({ defaultFrom: 'webmaster@localhost', output });
    await mailer.send({
      to: ['alice@example.com', 'bob@example.com'],
      subject: 'Réinitialisez votre mot de passe',
      text: 'Open http://localhost:8000/accounts/password/reset/key/abc/\n',
      html: '<p>Open the link</p>',
      headers: { 'X-Latchkey-Purpose': 'password-reset' },
    });

    expect(written()).toBe(
      [
        'From: webmaster@localhost',
        'To: alice@example.com, bob@example.com',
        'Subject: Réinitialisez votre mot de passe',
        'X-Latchkey-Purpose: password-reset',
        '',
        'Open http://localhost:8000/accounts/password/reset/key/abc/',
        '',
        '[HTML alternative, 20 characters, not shown]',
        '-'.repeat(79),
        '',
      ].join('\n'),
    );
  });

  it('prints messages one after another', async () => {
    const { output, written } = capture();
    const mailer = new ConsoleMailer({ defaultFrom: 'webmaster@localhost', output });
    await mailer.send({ to: ['a@example.com'], subject: 'One', text: 'first' });
    await mailer.send({ from: 'support@example.com', to: ['b@example.com'], subject: 'Two', text: 'second' });

    const printed = written();
    expect(printed.indexOf('Subject: One')).toBeLessThan(printed.indexOf('Subject: Two'));
    expect(printed).toContain('From: support@example.com\nTo: b@example.com\nSubject: Two\n\nsecond\n');
  });

  it('refuses a subject with a line break and prints nothing', async () => {
    const { output, written } = capture();
    const mailer = new ConsoleMailer({ defaultFrom: 'webmaster@localhost', output });
    await expect(mailer.send({ to: ['a@example.com'], subject: 'Hi\nBcc: x@example.com', text: 'x' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect(written()).toBe('');
  });
});
