import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConsoleMailer } from './console-mailer.js';
import { createMailer } from './create-mailer.js';
import { MemoryMailer } from './memory-mailer.js';
import { SmtpMailer } from './smtp-mailer.js';

const defaultFrom = 'webmaster@localhost';

describe('createMailer', () => {
  it('picks the backend from the URL', async () => {
    expect(createMailer({ url: 'memory:', defaultFrom })).toBeInstanceOf(MemoryMailer);
    expect(createMailer({ url: 'console:', defaultFrom, output: new PassThrough() })).toBeInstanceOf(ConsoleMailer);
    // Creating a pooled SMTP transport opens no connection, so no server is needed here.
    const smtp = createMailer({ url: 'smtps://user:secret@mail.example.com:465', defaultFrom });
    expect(smtp).toBeInstanceOf(SmtpMailer);
    await smtp.close();
  });

  it('passes the default sender to the backend', async () => {
    const mailer = createMailer({ url: 'memory:', defaultFrom }) as MemoryMailer;
    await mailer.send({ to: ['alice@example.com'], subject: 'Hi', text: 'x' });
    expect(mailer.outbox[0]?.from).toBe(defaultFrom);
  });

  it.each(['ftp://user:hunter22@example.com:21', '', 'garbage', 'smtp//user:hunter22@host'])(
    'refuses %j with configuration_invalid naming EMAIL_URL',
    (url) => {
      let thrown: unknown;
      try {
        createMailer({ url, defaultFrom });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'configuration_invalid', param: 'EMAIL_URL' });
      expect((thrown as Error).message).toMatch(/^EMAIL_URL=/);
      expect((thrown as Error).message).not.toContain('hunter22');
    },
  );
});
