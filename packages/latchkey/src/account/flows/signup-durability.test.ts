/**
 * A signup is one transaction (the account, its address, its user_signed_up record and its
 * confirmation mail in the outbox), and the mail is not lost when the mail server is down or the
 * process stops before sending: the next sweep, or the next start, sends it. On every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { openLatchkey, type InternalLatchkey } from '../../latchkey.js';
import { MemoryMailer } from '../../mail/index.js';
import type { EmailMessage } from '../../mail/ports.js';
import { openDatabase } from '../../storage/database.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../testing/latchkey.js';
import { confirmEmail } from '../email-confirmation.js';
import type { AccountEvent } from '../events.js';
import { signup } from './signup.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };
const MINUTE = 60_000;
const form = { email: 'ada@example.com', username: 'ada', password1: PASSWORD, password2: PASSWORD, client };

/** The key of the confirmation link in a mail, as a person would follow it. */
function confirmationKey(mail: { text: string } | undefined): string {
  const match = /\/accounts\/confirm-email\/([^/\s]+)\//.exec(mail?.text ?? '');
  if (!match) throw new Error('No confirmation link in the mail.');
  return match[1]!;
}

/** A mail server that refuses every message while `down`. */
function breakable(mailer: MemoryMailer): { down: boolean } {
  const state = { down: true };
  const send = mailer.send.bind(mailer);
  mailer.send = (message: EmailMessage) => (state.down ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:25')) : send(message));
  return state;
}

describe.each(testDatabaseKinds())('signup durability on %s', (kind) => {
  let latchkey: TestLatchkey | undefined;
  let database: TestDatabase | undefined;
  const running: InternalLatchkey[] = [];
  afterEach(async () => {
    await latchkey?.destroy();
    for (const instance of running.splice(0)) await instance.close();
    await database?.destroy();
    latchkey = undefined;
    database = undefined;
  });

  it('keeps the account, its record and its mail when the mail server is down, and sends the mail with a later sweep', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    const server = breakable(latchkey.mailer);
    const result = await signup(latchkey.deps, form);
    expect(result).toMatchObject({ status: 'verification_sent', mailFailed: true });
    const user = (await latchkey.deps.store.users.findByUsername('ada'))!;
    expect((await latchkey.deps.store.auditLog.listForUser(user.id)).map((record) => record.event)).toEqual(['email_confirmation_sent', 'user_signed_up']);
    expect(await latchkey.deps.store.mailOutbox.list()).toEqual([expect.objectContaining({ recipients: ['ada@example.com'], attempts: 1, lastError: 'connect ECONNREFUSED 127.0.0.1:25' })]);

    server.down = false;
    await latchkey.deps.mailOutbox.sweep();
    expect(latchkey.mailer.outbox).toEqual([]);
    latchkey.clock.advance(MINUTE);
    await latchkey.deps.mailOutbox.sweep();
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(await latchkey.deps.store.mailOutbox.list()).toEqual([]);
    const confirmed = await confirmEmail(latchkey.deps, confirmationKey(latchkey.mailer.outbox[0]), client);
    expect(confirmed).toMatchObject({ userId: user.id, verified: true });
  });

  it('sends at the next start what a stopped instance committed but could not send', async () => {
    database = await createTestDatabase(kind, 'username', { sqliteFile: true });
    const settings = testSettings({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    const before = new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL });
    breakable(before);
    const first = await openLatchkey({ settings, clock: new ManualClock('2030-01-01T00:00:00Z'), mailer: before, database, migrations: 'require' });
    await signup(first.deps, form);
    await first.close();

    const after = new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL });
    const reopened = await openDatabase(database.openOptions);
    const second = await openLatchkey({ settings, clock: new ManualClock('2030-01-01T00:05:00Z'), mailer: after, database: reopened, migrations: 'require' });
    running.push(second);
    // The sweep at start-up runs in the background; nothing else is asked of the new instance.
    await second.deps.background.idle();
    expect(after.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(await second.deps.store.mailOutbox.list()).toEqual([]);
    const confirmed = await confirmEmail(second.deps, confirmationKey(after.outbox[0]), client);
    expect(confirmed).toMatchObject({ email: 'ada@example.com', verified: true });
  });

  it('writes nothing, and tells no subscriber, when the last write of a signup fails', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    const heard: AccountEvent[] = [];
    latchkey.deps.events.subscribe('*', (event) => void heard.push(event));
    const { store } = latchkey.deps;
    const transaction = store.transaction.bind(store);
    // The outbox's write is the last of the signup's transaction: the account, its address and
    // its record are written by then, and must all be rolled back with it.
    store.transaction = (work) =>
      transaction((repositories) => work({ ...repositories, mailOutbox: { ...repositories.mailOutbox, add: () => Promise.reject(new Error('disk full')) } }));
    await expect(signup(latchkey.deps, form)).rejects.toThrow('disk full');
    store.transaction = transaction;

    expect(await store.users.count()).toBe(0);
    expect(await store.emailAddresses.listByEmail('ada@example.com')).toEqual([]);
    expect(await store.auditLog.search({ limit: 10 })).toEqual([]);
    expect(await store.mailOutbox.list()).toEqual([]);
    expect(latchkey.mailer.outbox).toEqual([]);
    expect(heard).toEqual([]);
    // Nothing is left in the way: the same signup succeeds.
    expect(await signup(latchkey.deps, form)).toMatchObject({ status: 'verification_sent', mailFailed: false });
    expect(heard.map((event) => event.name)).toEqual(['user_signed_up', 'email_confirmation_sent']);
  });

  it('leaves nothing of the stand-in account a registered address rehearses, and mails only its owner', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    await signup(latchkey.deps, form);
    const { store } = latchkey.deps;
    const records = (await store.auditLog.search({ limit: 100 })).map((record) => record.event);
    latchkey.mailer.clear();
    const heard: AccountEvent[] = [];
    latchkey.deps.events.subscribe('*', (event) => void heard.push(event));
    // Past the per-address wait between two mails (confirm_email), so that the owner is told.
    latchkey.clock.advance(5 * MINUTE);

    const again = await signup(latchkey.deps, { ...form, username: 'eve' });
    expect(again).toMatchObject({ status: 'verification_sent', email: 'ada@example.com' });
    expect(await store.users.count()).toBe(1);
    expect((await store.users.search({ order: 'id', limit: 10 })).map((user) => user.email)).toEqual(['ada@example.com']);
    expect(await store.emailAddresses.search({ limit: 10 })).toHaveLength(1);
    expect((await store.auditLog.search({ limit: 100 })).map((record) => record.event)).toEqual(records);
    expect(await store.mailOutbox.list()).toEqual([]);
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(latchkey.mailer.outbox[0]!.text).not.toContain('/accounts/confirm-email/');
    expect(heard.map((event) => event.name)).not.toContain('user_signed_up');
  });
});

// Two instances in one process need two connections; on SQLite the second would wait for the
// first's write lock inside the synchronous driver, so this runs on PostgreSQL, where it matters.
describe.each(testDatabaseKinds().filter((kind) => kind === 'postgres'))('signups on two instances on %s', (kind) => {
  let database: TestDatabase | undefined;
  const running: InternalLatchkey[] = [];
  afterEach(async () => {
    for (const instance of running.splice(0)) await instance.close();
    await database?.destroy();
    database = undefined;
  });

  it('make one account per address however many run at once, in a project that signs in by username', async () => {
    database = await createTestDatabase(kind, 'username');
    const settings = testSettings({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_RATE_LIMITS: false } });
    const start = async (db: Parameters<typeof openLatchkey>[0]['database']) => {
      const instance = await openLatchkey({ settings, clock: new ManualClock('2030-01-01T00:00:00Z'), mailer: new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL }), database: db, migrations: 'require' });
      running.push(instance);
      return instance;
    };
    const instances = [await start(database), await start(await openDatabase(database.openOptions))];
    for (const round of [1, 2, 3]) {
      const email = `ada${round}@example.com`;
      const results = await Promise.all(
        ['a', 'b', 'c', 'd'].map((suffix, index) => signup(instances[index % 2]!.deps, { ...form, email, username: `ada${round}${suffix}` })),
      );
      // Each answers as a new signup does; one of them made the account, the others told its owner.
      for (const result of results) expect(result).toMatchObject({ status: 'verification_sent', email });
      expect(await instances[0]!.deps.store.emailAddresses.listByEmail(email), email).toHaveLength(1);
    }
    expect(await instances[1]!.deps.store.users.count()).toBe(3);
  });
});

