/**
 * latchkey.mail as a project's code uses it: a mail of its own, from its templates, sent as
 * Latchkey sends its own (through the outbox, with the subject prefix and the site's name).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SettingValues } from '../config/settings.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';

describe.each(testDatabaseKinds())('latchkey.mail on %s', (kind) => {
  let latchkey: TestLatchkey;
  let templates: string;

  beforeEach(async () => {
    templates = await mkdtemp(join(tmpdir(), 'latchkey-facade-mail-'));
    await writeFile(join(templates, 'order_placed_subject.txt'), 'Your order {{ order }} from {{ site_name }}\n');
    await writeFile(join(templates, 'order_placed_message.txt'), "Hello {{ name }},\n\nyour order {{ order }} at {{ site_name }} ({{ site_url }}) is on its way.\n");
    await writeFile(join(templates, 'order_placed_message.html'), '<p>Hello {{ name }}, your order {{ order }} at {{ site_name }} is on its way.</p>\n');
  });

  afterEach(async () => {
    await latchkey.destroy();
    await rm(templates, { recursive: true, force: true });
  });

  function open(settings: Partial<SettingValues> = {}) {
    return createTestLatchkey({ kind, templateDirs: [templates], settings });
  }

  it("renders the project's templates with the subject prefix and site_name, and sends the mail", async () => {
    latchkey = await open();

    const outcome = await latchkey.mail.send({ template: 'order_placed', to: 'ada@example.com', context: { name: "Ada O'Brien", order: 42 } });

    expect(outcome).toEqual({ status: 'sent' });
    expect(latchkey.mailer.outbox).toHaveLength(1);
    const [mail] = latchkey.mailer.outbox;
    expect(mail?.to).toEqual(['ada@example.com']);
    expect(mail?.from).toBe(latchkey.settings.DEFAULT_FROM_EMAIL);
    expect(mail?.subject).toBe('[Test Site] Your order 42 from Test Site');
    expect(mail?.text).toBe(`Hello Ada O'Brien,\n\nyour order 42 at Test Site (${latchkey.settings.SITE_URL}) is on its way.\n`);
    expect(mail?.html).toContain('<p>Hello Ada O&#39;Brien, your order 42 at Test Site is on its way.</p>');
  });

  it('escapes what the context holds in the HTML body only', async () => {
    latchkey = await open();
    await latchkey.mail.send({ template: 'order_placed', to: 'ada@example.com', context: { name: '<b>Ada</b>', order: 1 } });
    const [mail] = latchkey.mailer.outbox;
    expect(mail?.text).toContain('Hello <b>Ada</b>,');
    expect(mail?.html).toContain('Hello &lt;b&gt;Ada&lt;/b&gt;,');
    expect(mail?.html).not.toContain('<b>Ada</b>');
  });

  it('puts ACCOUNT_EMAIL_SUBJECT_PREFIX in front of the subject when the project sets one', async () => {
    latchkey = await open({ ACCOUNT_EMAIL_SUBJECT_PREFIX: 'Shop: ' });
    await latchkey.mail.send({ template: 'order_placed', to: 'ada@example.com', context: { order: 7 } });
    expect(latchkey.mailer.outbox[0]?.subject).toBe('Shop: Your order 7 from Test Site');
  });

  it('sends without a context: the templates still read site_name', async () => {
    latchkey = await open();
    expect(await latchkey.mail.send({ template: 'order_placed', to: 'ada@example.com' })).toEqual({ status: 'sent' });
    expect(latchkey.mailer.outbox[0]?.subject).toBe('[Test Site] Your order from Test Site');
  });

  it('sweepOutbox sends nothing and returns 0 when nothing is due, also after a mail went', async () => {
    latchkey = await open();
    expect(await latchkey.mail.sweepOutbox()).toBe(0);
    await latchkey.mail.send({ template: 'order_placed', to: 'ada@example.com', context: { order: 1 } });
    latchkey.clock.advance(24 * 60 * 60_000);
    expect(await latchkey.mail.sweepOutbox()).toBe(0);
    expect(latchkey.mailer.outbox).toHaveLength(1);
  });

  it("answers 'failed' when the mail server refuses, and the outbox's sweep sends the mail later", async () => {
    latchkey = await open();
    const refusal = new Error('the mail server is down');
    vi.spyOn(latchkey.mailer, 'send').mockRejectedValueOnce(refusal);

    expect(await latchkey.mail.send({ template: 'order_placed', to: 'ada@example.com', context: { order: 9 } })).toEqual({ status: 'failed', error: refusal });
    expect(latchkey.mailer.outbox).toEqual([]);

    // Not due yet: the first retry waits a minute.
    expect(await latchkey.mail.sweepOutbox()).toBe(0);
    latchkey.clock.advance(61_000);
    expect(await latchkey.mail.sweepOutbox()).toBe(1);

    expect(latchkey.mailer.outbox).toHaveLength(1);
    expect(latchkey.mailer.outbox[0]).toMatchObject({ to: ['ada@example.com'], subject: '[Test Site] Your order 9 from Test Site' });
    expect(await latchkey.mail.sweepOutbox()).toBe(0);
  });
});
