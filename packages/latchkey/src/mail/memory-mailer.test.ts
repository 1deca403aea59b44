import { describe, expect, it } from 'vitest';
import { MemoryMailer } from './memory-mailer.js';

describe('MemoryMailer', () => {
  it('keeps sent messages in the outbox with the sender resolved', async () => {
    const mailer = new MemoryMailer({ defaultFrom: 'webmaster@localhost' });
    await mailer.send({ to: ['alice@example.com'], subject: 'One', text: 'first' });
    await mailer.send({ from: 'support@example.com', to: ['bob@example.com'], subject: 'Two', text: 'second', html: '<b>2</b>' });

    expect(mailer.outbox).toEqual([
      { from: 'webmaster@localhost', to: ['alice@example.com'], subject: 'One', text: 'first', html: undefined, headers: {} },
      { from: 'support@example.com', to: ['bob@example.com'], subject: 'Two', text: 'second', html: '<b>2</b>', headers: {} },
    ]);
    expect(mailer.lastTo('bob@example.com')?.subject).toBe('Two');
    expect(mailer.lastTo('carol@example.com')).toBeUndefined();

    mailer.clear();
    expect(mailer.outbox).toEqual([]);
  });

  it('rejects (not throws) a message with a line break in the subject, and keeps nothing', async () => {
    const mailer = new MemoryMailer({ defaultFrom: 'webmaster@localhost' });
    const sending = mailer.send({ to: ['alice@example.com'], subject: 'Hi\r\nBcc: victim@example.com', text: 'x' });
    await expect(sending).rejects.toMatchObject({ code: 'invalid_input', param: 'subject' });
    expect(mailer.outbox).toEqual([]);
  });
});
