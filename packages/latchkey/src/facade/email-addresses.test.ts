/**
 * latchkey.emailAddresses as a project's code uses it: adding an address by code, verified or
 * not, listing a user's addresses and finding who verified an address.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { latchkeyErrorOf } from '../testing/latchkey-error.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

/** What `await action()` throws, as a project's async code would see it. */

describe.each(testDatabaseKinds())('latchkey.emailAddresses on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function twoUsers() {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    return { ada, grace };
  }

  it('adds an unverified address, not primary, and lists it after the primary one', async () => {
    const { ada } = await twoUsers();

    const added = await latchkey.emailAddresses.add(ada, 'Ada.Work@Example.COM', { verified: false });

    expect(added).toMatchObject({ userId: ada.id, email: 'ada.work@example.com', verified: false, primary: false });
    expect(await latchkey.emailAddresses.listForUser(ada)).toEqual([
      expect.objectContaining({ email: 'ada@example.com', verified: true, primary: true }),
      added,
    ]);
    // The user's own address is still the primary one.
    expect((await latchkey.users.findById(ada.id))?.email).toBe('ada@example.com');
  });

  it('adds a verified address, which findVerified then finds with whose it is', async () => {
    const { ada } = await twoUsers();
    const added = await latchkey.emailAddresses.add(ada, 'ada.work@example.com', { verified: true });
    expect(added).toMatchObject({ verified: true, primary: false });
    expect(await latchkey.emailAddresses.findVerified('ADA.WORK@example.com')).toEqual(added);
  });

  it('findVerified finds nothing for an address only claimed, or unknown, or malformed', async () => {
    const { ada } = await twoUsers();
    await latchkey.emailAddresses.add(ada, 'ada.work@example.com', { verified: false });
    expect(await latchkey.emailAddresses.findVerified('ada.work@example.com')).toBeUndefined();
    expect(await latchkey.emailAddresses.findVerified('nobody@example.com')).toBeUndefined();
    expect(await latchkey.emailAddresses.findVerified('not an address')).toBeUndefined();
    expect((await latchkey.emailAddresses.findVerified('ada@example.com'))?.userId).toBe(ada.id);
  });

  it('records email_added with the address, from the client given', async () => {
    const { ada } = await twoUsers();
    await latchkey.emailAddresses.add(ada, 'ada.work@example.com', { verified: false, client });
    const records = (await latchkey.audit.listForUser(ada)).filter((record) => record.event === 'email_added');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ userId: ada.id, data: { email: 'ada.work@example.com' }, ipAddress: client.ip, userAgent: client.userAgent });
  });

  it('the subscribers hear email_added', async () => {
    const { ada } = await twoUsers();
    const heard: string[] = [];
    latchkey.events.subscribe('email_added', (event) => {
      heard.push(String(event.data.email));
    });
    await latchkey.emailAddresses.add(ada, 'ada.work@example.com', { verified: false });
    expect(heard).toEqual(['ada.work@example.com']);
  });

  it.each([true, false])('refuses an address another user has verified (adding it as verified: %s), with email_taken, writing nothing', async (verified) => {
    const { ada, grace } = await twoUsers();
    const heard: unknown[] = [];
    latchkey.events.subscribe('*', (event) => {
      heard.push(event);
    });

    expect(await latchkeyErrorOf(() => latchkey.emailAddresses.add(grace, 'ADA@example.com', { verified, client }))).toMatchObject({ code: 'email_taken' });

    expect(await latchkey.emailAddresses.listForUser(grace)).toEqual([expect.objectContaining({ email: 'grace@example.com' })]);
    expect(await latchkey.audit.listForUser(grace)).toEqual([]);
    expect((await latchkey.emailAddresses.findVerified('ada@example.com'))?.userId).toBe(ada.id);
    expect(heard).toEqual([]);
  });

  it('refuses an address the user has already, with email_taken, writing nothing', async () => {
    const { ada } = await twoUsers();
    await latchkey.emailAddresses.add(ada, 'ada.work@example.com', { verified: false });
    expect(await latchkeyErrorOf(() => latchkey.emailAddresses.add(ada, 'Ada.Work@example.com', { verified: true }))).toMatchObject({ code: 'email_taken' });
    expect(await latchkey.emailAddresses.listForUser(ada)).toHaveLength(2);
    expect((await latchkey.audit.listForUser(ada)).filter((record) => record.event === 'email_added')).toHaveLength(1);
  });

  it('refuses a malformed address with invalid_email, writing nothing', async () => {
    const { ada } = await twoUsers();
    for (const email of ['', 'ada', 'ada@', '@example.com', 'ada@example.com\nbcc: eve@example.com']) {
      expect(await latchkeyErrorOf(() => latchkey.emailAddresses.add(ada, email, { verified: true }))).toMatchObject({ code: 'invalid_email' });
    }
    expect(await latchkey.emailAddresses.listForUser(ada)).toHaveLength(1);
    expect(await latchkey.audit.listForUser(ada)).toEqual([]);
  });

  it('refuses to add an address to an account that does not exist, with not_found', async () => {
    const { ada } = await twoUsers();
    const gone = { id: ada.id + 1000 };
    expect(await latchkeyErrorOf(() => latchkey.emailAddresses.add(gone, 'nobody@example.com', { verified: true }))).toMatchObject({ code: 'not_found' });
    expect(await latchkey.emailAddresses.findVerified('nobody@example.com')).toBeUndefined();
  });

  it('lists no address for a user without one', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', password: PASSWORD, emailVerified: false });
    expect(await latchkey.emailAddresses.listForUser(ada)).toEqual([]);
  });
});
