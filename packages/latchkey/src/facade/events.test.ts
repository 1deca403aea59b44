/**
 * latchkey.events and latchkey.audit as a project's code uses them: hearing account events after
 * they commit, and writing records of the project's own beside Latchkey's.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ACCOUNT_EVENTS, type AccountEvent } from '../account/events.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { latchkeyErrorOf } from '../testing/latchkey-error.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };


/** A log that keeps what it is told, so that a failing subscriber's line is checked rather than printed. */
function memoryLog() {
  return { error: vi.fn<(message: string) => void>(), warn: vi.fn<(message: string) => void>(), info: vi.fn<(message: string) => void>() };
}

describe.each(testDatabaseKinds())('latchkey.events on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('creating a user through latchkey.users.create records no event', async () => {
    latchkey = await createTestLatchkey({ kind });
    const heard = vi.fn();
    latchkey.events.subscribe('*', heard);
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect(heard).not.toHaveBeenCalled();
    expect(await latchkey.audit.listForUser(ada)).toEqual([]);
  });

  it('a subscriber hears the event it subscribed to, with its user, time, client and data', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const heard: AccountEvent[] = [];
    latchkey.events.subscribe('social_account_added', (event) => {
      heard.push(event);
    });

    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' }, client);

    expect(heard).toEqual([{ name: 'social_account_added', userId: ada.id, at: latchkey.clock.now(), client, data: { provider: 'github' } }]);
  });

  it('a subscriber to another event does not hear it; one to every event does', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const other = vi.fn();
    const every = vi.fn();
    latchkey.events.subscribe('user_logged_in', other);
    latchkey.events.subscribe('*', every);

    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });

    expect(other).not.toHaveBeenCalled();
    expect(every).toHaveBeenCalledTimes(1);
    expect(every).toHaveBeenCalledWith(expect.objectContaining({ name: 'social_account_added', userId: ada.id }));
  });

  it('hears the event once the change has committed: the subscriber finds the account connected', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const seen: string[][] = [];
    latchkey.events.subscribe('social_account_added', async (event) => {
      seen.push((await latchkey.socialAccounts.listForUser({ id: event.userId ?? 0 })).map((account) => account.uid));
    });

    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });

    expect(seen).toEqual([['1234']]);
  });

  it('unsubscribing stops the handler hearing events, and leaves other subscribers alone', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const stopped = vi.fn();
    const kept = vi.fn();
    const unsubscribe = latchkey.events.subscribe('social_account_added', stopped);
    latchkey.events.subscribe('social_account_added', kept);

    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1' });
    unsubscribe();
    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '2' });

    expect(stopped).toHaveBeenCalledTimes(1);
    expect(kept).toHaveBeenCalledTimes(2);
  });

  it('a subscriber that throws is logged and undoes nothing', async () => {
    const log = memoryLog();
    latchkey = await createTestLatchkey({ kind, log });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const after = vi.fn();
    latchkey.events.subscribe('social_account_added', () => {
      throw new Error('the subscriber broke');
    });
    latchkey.events.subscribe('social_account_added', after);

    const account = await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });

    expect(await latchkey.socialAccounts.listForUser(ada)).toEqual([account]);
    expect((await latchkey.audit.listForUser(ada)).map((record) => record.event)).toEqual(['social_account_added']);
    expect(after).toHaveBeenCalledTimes(1);
    expect(log.error).toHaveBeenCalledWith(expect.stringContaining('the subscriber broke'));
  });
});

describe.each(testDatabaseKinds())('latchkey.audit on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it("records a project's own event, which listForUser then shows", async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });

    const record = await latchkey.audit.record('shop.order_placed', ada, client, { order: 42 });

    expect(record).toMatchObject({
      id: expect.any(Number) as number,
      event: 'shop.order_placed',
      userId: ada.id,
      targetUserId: null,
      createdAt: latchkey.clock.now(),
      ipAddress: client.ip,
      userAgent: client.userAgent,
      data: { order: 42 },
    });
    expect(await latchkey.audit.listForUser(ada)).toEqual([record]);
  });

  it('stores empty data when none is given, and a record without a user belongs to no one', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const record = await latchkey.audit.record('maintenance', null, client);
    expect(record).toMatchObject({ event: 'maintenance', userId: null, data: {} });
    expect(await latchkey.audit.listForUser(ada)).toEqual([]);
  });

  it('does not hand a project record to the event subscribers', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const every = vi.fn();
    latchkey.events.subscribe('*', every);
    await latchkey.audit.record('shop.order_placed', ada, client);
    expect(every).not.toHaveBeenCalled();
  });

  it("lists the user's records newest first, Latchkey's and the project's together, up to the limit", async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.audit.record('shop.first', ada, client);
    latchkey.clock.advance(1000);
    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1' });
    latchkey.clock.advance(1000);
    await latchkey.audit.record('shop.third', ada, client);
    await latchkey.audit.record('shop.other', grace, client);

    expect((await latchkey.audit.listForUser(ada)).map((record) => record.event)).toEqual(['shop.third', 'social_account_added', 'shop.first']);
    expect((await latchkey.audit.listForUser(ada, 2)).map((record) => record.event)).toEqual(['shop.third', 'social_account_added']);
    expect((await latchkey.audit.listForUser(grace)).map((record) => record.event)).toEqual(['shop.other']);
  });

  it("refuses every one of Latchkey's own event names with invalid_input, recording nothing", async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });

    expect(await latchkeyErrorOf(() => latchkey.audit.record('user_logged_in', ada, client))).toMatchObject({ code: 'invalid_input', param: 'name' });
    for (const name of ACCOUNT_EVENTS) {
      expect((await latchkeyErrorOf(() => latchkey.audit.record(name, ada, client))).code).toBe('invalid_input');
    }

    expect(await latchkey.audit.listForUser(ada)).toEqual([]);
  });

  it('refuses a malformed name with invalid_input, recording nothing', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });

    for (const name of ['', 'Order_placed', '1order', '_order', 'order placed', 'order/placed', 'ordér', 'order\n', 'a'.repeat(65)]) {
      expect(await latchkeyErrorOf(() => latchkey.audit.record(name, ada, client))).toMatchObject({ code: 'invalid_input', param: 'name' });
    }

    expect(await latchkey.audit.listForUser(ada)).toEqual([]);
  });

  it('accepts a name of 64 characters, and the characters . : - _ and digits after the first letter', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.audit.record('a'.repeat(64), ada, client);
    latchkey.clock.advance(1000);
    await latchkey.audit.record('shop.order:placed-2_b', ada, client);
    expect((await latchkey.audit.listForUser(ada)).map((record) => record.event)).toEqual(['shop.order:placed-2_b', 'a'.repeat(64)]);
  });
});
