/**
 * The outbox's sender on a real database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set):
 * what goes at once, what is tried again and when, what is given up on, and that two instances on
 * one database never send one mail twice. Time is a ManualClock; nothing sleeps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { LatchkeyError } from '../core/errors.js';
import { openDatabase, type Database } from '../storage/database.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../testing/database.js';
import { MemoryMailer } from './memory-mailer.js';
import { MailOutboxSender, type MailOutboxPolicy } from './outbox-sender.js';
import type { EmailMessage } from './ports.js';

const SECRET_LINK = 'https://example.com/accounts/confirm-email/live-key/';
const SECRET_KEY = 'a-test-secret-key-that-is-long-enough-to-be-real-0123456789';
const MINUTE = 60_000;

function mail(to: string): EmailMessage {
  return { to: [to], subject: 'Confirm your address', text: `Follow ${SECRET_LINK}` };
}

/** A mail server that refuses everything until it is mended, or holds every message until released. */
class UnreliableMailer extends MemoryMailer {
  failing = false;
  hanging = false;
  private readonly held: (() => void)[] = [];

  constructor() {
    super({ defaultFrom: 'webmaster@localhost' });
  }

  override async send(message: EmailMessage): Promise<void> {
    if (this.failing) throw new LatchkeyError('mail_failed', 'The mail server refused the message.');
    if (this.hanging) await new Promise<void>((resolve) => this.held.push(resolve));
    return super.send(message);
  }

  get holding(): number {
    return this.held.length;
  }

  release(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }
}

describe.each(testDatabaseKinds())('the mail outbox on %s', (kind) => {
  let database: TestDatabase;
  const opened: Database[] = [];
  const senders: MailOutboxSender[] = [];

  async function setUp(policy: Partial<MailOutboxPolicy> = {}) {
    // A file for SQLite, so that a second instance can open the same database.
    database = await createTestDatabase(kind, 'email', { sqliteFile: true });
    return instance(database, policy);
  }

  function instance(on: Database, policy: Partial<MailOutboxPolicy> = {}) {
    const clock = new ManualClock();
    const mailer = new UnreliableMailer();
    const errors: string[] = [];
    const sender = new MailOutboxSender({ repository: on.store.mailOutbox, mailer, clock, secretKey: SECRET_KEY, policy, log: { error: (message) => errors.push(message) } });
    senders.push(sender);
    // Queues as a change does: the message sealed by the sender (account/changes.ts).
    const outbox = { ...on.store.mailOutbox, add: (message: EmailMessage, at: Date) => on.store.mailOutbox.add(sender.seal(message), at) };
    return { clock, mailer, sender, errors, outbox };
  }

  afterEach(async () => {
    for (const sender of senders.splice(0)) await sender.close();
    for (const other of opened.splice(0)) await other.close();
    await database.destroy();
  });

  it('sends a queued mail at once and deletes its row, link and all', async () => {
    const { clock, mailer, sender, outbox } = await setUp();
    const id = await outbox.add(mail('ada@example.com'), clock.now());
    expect(await sender.deliver(id)).toEqual({ status: 'sent' });
    expect(mailer.outbox.map((sent) => sent.text)).toEqual([`Follow ${SECRET_LINK}`]);
    expect(await outbox.list()).toEqual([]);
    // Delivering it again sends nothing more.
    expect(await sender.deliver(id)).toEqual({ status: 'sent' });
    expect(mailer.outbox).toHaveLength(1);
  });

  it('keeps a waiting mail sealed: a copy of its row holds neither its link nor its text', async () => {
    const { clock, mailer, sender, outbox } = await setUp();
    mailer.failing = true;
    const id = await outbox.add(mail('ada@example.com'), clock.now());
    await sender.deliver(id);
    const rows = await database.kysely.selectFrom('latchkey_mail_outbox').selectAll().execute();
    expect(rows).toEqual([expect.objectContaining({ id, recipients: '["ada@example.com"]', subject: 'Confirm your address' })]);
    expect(JSON.stringify(rows)).not.toContain('live-key');
    expect(JSON.stringify(rows)).not.toContain('Follow');
  });

  it('gives up at once on a mail sealed under another secret key, saying why, and still sends one queued in plain text before sealing', async () => {
    const { clock, mailer, sender, outbox, errors } = await setUp();
    const other = instance(database);
    const foreign = await database.store.mailOutbox.add({ ...other.sender.seal(mail('ada@example.com')), sealedMessage: other.sender.seal(mail('ada@example.com')).sealedMessage }, clock.now());
    const withOtherKey = new MailOutboxSender({ repository: database.store.mailOutbox, mailer: other.mailer, clock, secretKey: `${SECRET_KEY}-changed`, log: { error: (message) => errors.push(message) } });
    senders.push(withOtherKey);
    const outcome = await withOtherKey.deliver(foreign);
    expect(outcome).toMatchObject({ status: 'failed', error: { message: expect.stringContaining('LATCHKEY_SECRET_KEY') } });
    expect(await outbox.list()).toEqual([expect.objectContaining({ id: foreign, abandonedAt: clock.now() })]);
    expect(other.mailer.outbox).toEqual([]);

    const legacy = await database.store.mailOutbox.add({ recipients: ['bob@example.com'], subject: 'Hello', sealedMessage: JSON.stringify(mail('bob@example.com')) }, clock.now());
    expect(await sender.deliver(legacy)).toEqual({ status: 'sent' });
    expect(mailer.outbox.map((sent) => sent.to)).toEqual([['bob@example.com']]);
  });

  it('keeps a mail the server refused, and sends it with the first sweep after its backoff', async () => {
    const { clock, mailer, sender, outbox } = await setUp();
    const id = await outbox.add(mail('ada@example.com'), clock.now());
    mailer.failing = true;
    const outcome = await sender.deliver(id);
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'mail_failed' } });
    expect(await outbox.list()).toEqual([expect.objectContaining({ id, attempts: 1, nextAttemptAt: new Date(clock.now().getTime() + MINUTE), claimedUntil: null })]);

    mailer.failing = false;
    expect(await sender.sweep()).toBe(0);
    clock.advance(MINUTE);
    expect(await sender.sweep()).toBe(1);
    expect(mailer.outbox.map((sent) => sent.to)).toEqual([['ada@example.com']]);
    expect(await outbox.list()).toEqual([]);
  });

  it('waits twice as long after each failure, then gives up and blanks the body, never logging it', async () => {
    const { clock, mailer, sender, outbox, errors } = await setUp({ maxAttempts: 4 });
    const id = await outbox.add(mail('ada@example.com'), clock.now());
    mailer.failing = true;
    await sender.deliver(id);
    const waits: number[] = [];
    for (let attempt = 2; attempt <= 4; attempt += 1) {
      const [entry] = await outbox.list();
      waits.push(entry!.nextAttemptAt.getTime() - clock.now().getTime());
      clock.set(entry!.nextAttemptAt);
      expect(await sender.sweep()).toBe(0);
    }
    expect(waits).toEqual([MINUTE, 2 * MINUTE, 4 * MINUTE]);
    const [abandoned] = await outbox.list();
    expect(abandoned).toMatchObject({ id, recipients: ['ada@example.com'], attempts: 4, abandonedAt: clock.now(), lastError: 'The mail server refused the message.' });
    mailer.failing = false;
    clock.advance(24 * 60 * MINUTE);
    expect(await sender.sweep()).toBe(0);
    expect(mailer.outbox).toEqual([]);
    expect(errors).toHaveLength(3);
    expect(errors.join('\n')).not.toContain(SECRET_LINK);
  });

  it('leaves a mail just committed to the instance that queued it, and sweeps it up once left behind', async () => {
    const { clock, mailer, sender, outbox } = await setUp();
    await outbox.add(mail('ada@example.com'), clock.now());
    expect(await sender.sweep()).toBe(0);
    clock.advance(29_000);
    expect(await sender.sweep()).toBe(0);
    clock.advance(2_000);
    expect(await sender.sweep()).toBe(1);
    expect(mailer.outbox).toHaveLength(1);
  });

  it('sends each mail once when two instances on one database sweep at the same time', async () => {
    const first = await setUp();
    const otherDatabase = await openDatabase(database.openOptions);
    opened.push(otherDatabase);
    const second = instance(otherDatabase);
    const recipients = Array.from({ length: 12 }, (_, index) => `user${index}@example.com`);
    for (const to of recipients) await first.outbox.add(mail(to), first.clock.now());
    first.clock.advance(MINUTE);
    second.clock.advance(MINUTE);

    const [fromFirst, fromSecond] = await Promise.all([first.sender.sweep(), second.sender.sweep()]);
    expect(fromFirst + fromSecond).toBe(recipients.length);
    const sent = [...first.mailer.outbox, ...second.mailer.outbox].map((email) => email.to[0]);
    expect(sent.sort()).toEqual([...recipients].sort());
    expect(await first.outbox.list()).toEqual([]);
  });

  it('waits on close for a mail being sent', async () => {
    const { clock, mailer, sender, outbox } = await setUp();
    const id = await outbox.add(mail('ada@example.com'), clock.now());
    mailer.hanging = true;
    const delivery = sender.deliver(id);
    let closed = false;
    const closing = sender.close().then(() => (closed = true));
    // Turns of the event loop, not time: once the server holds the message, close must be waiting for it.
    while (mailer.holding === 0) await new Promise((resolve) => setImmediate(resolve));
    for (let turn = 0; turn < 10; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    mailer.release();
    await closing;
    expect(await delivery).toEqual({ status: 'sent' });
    expect(mailer.outbox).toHaveLength(1);
    expect(await outbox.list()).toEqual([]);
  });
});
