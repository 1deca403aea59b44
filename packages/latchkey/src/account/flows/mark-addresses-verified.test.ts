import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import type { AccountEvent } from '../events.js';
import { isUsablePassword } from '../passwords/index.js';
import { createUser } from '../users.js';
import { markAddressesVerified } from './mark-addresses-verified.js';

const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('marking addresses verified from the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  const person = (username: string, options: { email?: string; emailVerified?: boolean; isStaff?: boolean; isSuperuser?: boolean } = {}) =>
    createUser(latchkey.deps, { username, email: `${username}@example.com`, password: 'a long enough passphrase', emailVerified: false, ...options });

  it('verifies each address on its own, reports those verified already, taken by another user or gone, and emits email_confirmed per address', async () => {
    latchkey = await createTestLatchkey({ kind });
    const root = await person('root', { isStaff: true, isSuperuser: true });
    const ada = await person('ada');
    const bob = await person('bob', { emailVerified: true });
    const eve = await person('eve', { email: 'shared@example.com', emailVerified: true });
    const { store } = latchkey.deps;
    const [adas] = await store.emailAddresses.listForUser(ada.id);
    const [bobs] = await store.emailAddresses.listForUser(bob.id);
    const adasShared = await store.emailAddresses.add({ userId: ada.id, email: 'shared@example.com', verified: false, primary: false });
    const events: AccountEvent[] = [];
    latchkey.deps.events.subscribe('email_confirmed', (event) => void events.push(event));

    const result = await markAddressesVerified(latchkey.deps, root, [adas!.id, bobs!.id, adasShared.id, 999_999, adas!.id], client);
    expect(result.verified.map((address) => address.id)).toEqual([adas!.id]);
    expect(result.alreadyVerified.map((address) => address.id)).toEqual([bobs!.id]);
    expect(result.taken.map((address) => address.id)).toEqual([adasShared.id]);
    expect(result.missing).toEqual([999_999]);
    expect((await store.emailAddresses.findById(adas!.id))?.verified).toBe(true);
    expect((await store.emailAddresses.findById(adasShared.id))?.verified).toBe(false);
    expect((await store.emailAddresses.findVerified('shared@example.com'))?.userId).toBe(eve.id);
    expect(events.map((event) => [event.name, event.userId, event.data])).toEqual([['email_confirmed', ada.id, { email: 'ada@example.com', by: 'admin', staff: root.id }]]);
    expect((await store.auditLog.listForUser(ada.id)).find((record) => record.event === 'email_confirmed')?.data).toEqual({ email: 'ada@example.com', by: 'admin', staff: root.id });
  });

  it('voids the unverified claims other accounts hold on an address it verifies, as a confirmation link does', async () => {
    latchkey = await createTestLatchkey({ kind });
    const root = await person('root', { isStaff: true, isSuperuser: true });
    // Mallory signed up first with Victor's address, unverified, and a password of her own.
    const mallory = await person('mallory', { email: 'victor@example.com' });
    const victor = await person('victor', { email: 'victor@example.com' });
    const { store } = latchkey.deps;
    await latchkey.deps.sessions.create({ userId: mallory.id });
    const [victors] = await store.emailAddresses.listForUser(victor.id);
    const result = await markAddressesVerified(latchkey.deps, root, [victors!.id], client);
    expect(result.verified).toHaveLength(1);
    expect(await store.emailAddresses.listForUser(mallory.id)).toEqual([]);
    expect(await store.sessions.listForUser(mallory.id)).toEqual([]);
    expect(isUsablePassword((await store.users.findById(mallory.id))!.password)).toBe(false);
    expect(isUsablePassword((await store.users.findById(victor.id))!.password)).toBe(true);
  });

  it('refuses staff who may only view email addresses, and changes nothing', async () => {
    latchkey = await createTestLatchkey({ kind });
    const root = await person('root', { isStaff: true, isSuperuser: true });
    const clerk = await person('clerk', { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, [{ model: 'account.emailaddress', action: 'view' }], client);
    const ada = await person('ada');
    const [adas] = await latchkey.deps.store.emailAddresses.listForUser(ada.id);
    await expect(markAddressesVerified(latchkey.deps, clerk, [adas!.id], client)).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(markAddressesVerified(latchkey.deps, ada, [adas!.id], client)).rejects.toMatchObject({ code: 'permission_denied' });
    expect((await latchkey.deps.store.emailAddresses.findById(adas!.id))?.verified).toBe(false);
    await setAdminPermissions(latchkey.deps, root, clerk, [{ model: 'account.emailaddress', action: 'change' }], client);
    expect((await markAddressesVerified(latchkey.deps, clerk, [adas!.id], client)).verified).toHaveLength(1);
  });
});
