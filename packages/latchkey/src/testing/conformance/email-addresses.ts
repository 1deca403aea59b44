import { describe, expect, it } from 'vitest';
import type { EmailAddress } from '../../account/model.js';
import type { Store } from '../../store.js';
import { createUser, expectLatchkeyError, settleAll, useFreshDatabase, type ConformanceTarget } from './harness.js';

async function primariesOf(store: Store, userId: number): Promise<EmailAddress[]> {
  return (await store.emailAddresses.listForUser(userId)).filter((address) => address.primary);
}

export function describeEmailAddressRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('EmailAddressRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;

    it('adds a normalized address and finds it by id, by user and by address', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const added = await store().emailAddresses.add({ userId: jane.id, email: 'Jane.Work@Example.COM', verified: false, primary: false });
      expect(typeof added.id).toBe('number');
      expect(added).toEqual({ id: added.id, userId: jane.id, email: 'jane.work@example.com', verified: false, primary: false });
      expect(await store().emailAddresses.findById(added.id)).toEqual(added);
      expect(await store().emailAddresses.findById(added.id + 1000)).toBeUndefined();
      expect(await store().emailAddresses.findForUser(jane.id, 'JANE.WORK@example.com')).toEqual(added);
      expect(await store().emailAddresses.findForUser(jane.id, 'other@example.com')).toBeUndefined();
      expect(await store().emailAddresses.findForUser(jane.id, 'not an address')).toBeUndefined();
      // A non-primary address leaves the user's own email column alone.
      expect((await store().users.findById(jane.id))?.email).toBe('jane@example.com');
    });

    it('refuses the same address twice for one user, in any case', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await store().emailAddresses.add({ userId: jane.id, email: 'jane@example.com', verified: false, primary: false });
      await expectLatchkeyError(store().emailAddresses.add({ userId: jane.id, email: 'JANE@example.com', verified: false, primary: false }), 'email_taken');
      expect(await store().emailAddresses.listForUser(jane.id)).toHaveLength(1);
    });

    it('refuses an invalid address and an unknown user', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await expectLatchkeyError(store().emailAddresses.add({ userId: jane.id, email: 'a@b.com,c@d.com', verified: false, primary: false }), 'invalid_email');
      await expectLatchkeyError(store().emailAddresses.add({ userId: jane.id + 1000, email: 'x@example.com', verified: false, primary: false }), 'not_found');
    });

    it('lets several users hold an address unverified, but only one verify it', async () => {
      const [jane, john, mary] = [await createUser(store(), usernameType, 'jane'), await createUser(store(), usernameType, 'john'), await createUser(store(), usernameType, 'mary')];
      const shared = 'shared@example.com';
      const janes = await store().emailAddresses.add({ userId: jane.id, email: shared, verified: false, primary: false });
      const johns = await store().emailAddresses.add({ userId: john.id, email: shared, verified: true, primary: false });
      expect(await store().emailAddresses.findVerified('SHARED@example.com')).toEqual(johns);
      expect(await store().emailAddresses.findVerified('nobody@example.com')).toBeUndefined();
      expect(await store().emailAddresses.findVerified('not an address')).toBeUndefined();

      await expectLatchkeyError(store().emailAddresses.markVerified(janes.id), 'email_taken');
      await expectLatchkeyError(store().emailAddresses.add({ userId: mary.id, email: shared, verified: true, primary: false }), 'email_taken');
      expect((await store().emailAddresses.findById(janes.id))?.verified).toBe(false);
      expect((await store().emailAddresses.listByEmail('Shared@Example.com')).map((address) => address.userId)).toEqual([jane.id, john.id]);
      expect(await store().emailAddresses.listByEmail('nobody@example.com')).toEqual([]);
      expect(await store().emailAddresses.listByEmail('not an address')).toEqual([]);
    });

    it('marks an address verified, and reports an unknown id', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const address = await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: false, primary: true });
      expect(await store().emailAddresses.markVerified(address.id)).toEqual({ ...address, verified: true });
      expect(await store().emailAddresses.markVerified(address.id + 1000)).toBeUndefined();
    });

    it('verifies an unverified address once when asked to leave a verified one alone, even when ten uses race', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const address = await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: false, primary: true });
      // Ten uses of one confirmation key at once, as two instances may get them.
      const { values, codes } = await settleAll(Array.from({ length: 10 }, () => store().emailAddresses.markVerified(address.id, { unverifiedOnly: true })));
      expect(values.filter((value) => value !== undefined)).toEqual([{ ...address, verified: true }]);
      expect(codes).toEqual([]);
      expect(await store().emailAddresses.markVerified(address.id, { unverifiedOnly: true })).toBeUndefined();
      // Without the option, a verified address is marked again (the admin's "make primary" needs it).
      expect(await store().emailAddresses.markVerified(address.id)).toEqual({ ...address, verified: true });
    });

    it('lets exactly one of ten users verify one address when they race', async () => {
      const addresses: EmailAddress[] = [];
      for (let index = 0; index < 10; index += 1) {
        const user = await createUser(store(), usernameType, `user${index}`);
        addresses.push(await store().emailAddresses.add({ userId: user.id, email: 'contested@example.com', verified: false, primary: false }));
      }
      const { values, codes } = await settleAll(addresses.map((address) => store().emailAddresses.markVerified(address.id)));
      expect(values).toHaveLength(1);
      expect(codes).toEqual(Array.from({ length: 9 }, () => 'email_taken'));
      expect((await store().emailAddresses.listByEmail('contested@example.com')).filter((address) => address.verified)).toHaveLength(1);
    });

    it('adding a primary address makes it the only primary and copies it to the user', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const first = await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: true, primary: true });
      const second = await store().emailAddresses.add({ userId: jane.id, email: 'Jane.New@example.com', verified: false, primary: true });
      expect(second.primary).toBe(true);
      expect(await primariesOf(store(), jane.id)).toEqual([second]);
      expect((await store().emailAddresses.findById(first.id))?.primary).toBe(false);
      expect((await store().users.findById(jane.id))?.email).toBe('jane.new@example.com');
      // Listing puts the primary address first.
      expect((await store().emailAddresses.listForUser(jane.id)).map((address) => address.id)).toEqual([second.id, first.id]);
    });

    it('setPrimary swaps the primary address and copies it to the user', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const first = await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: true, primary: true });
      const second = await store().emailAddresses.add({ userId: jane.id, email: 'jane2@example.com', verified: true, primary: false });
      expect(await store().emailAddresses.setPrimary(jane.id, second.id)).toEqual({ ...second, primary: true });
      expect(await primariesOf(store(), jane.id)).toEqual([{ ...second, primary: true }]);
      expect((await store().users.findById(jane.id))?.email).toBe('jane2@example.com');
      // Setting it again changes nothing.
      expect(await store().emailAddresses.setPrimary(jane.id, second.id)).toEqual({ ...second, primary: true });
      expect(await store().emailAddresses.setPrimary(jane.id, first.id)).toEqual({ ...first, primary: true });
      expect(await primariesOf(store(), jane.id)).toHaveLength(1);
    });

    it('setPrimary refuses another user’s address and an unknown id without changing anything', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const janes = await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: true, primary: true });
      const johns = await store().emailAddresses.add({ userId: john.id, email: john.email, verified: true, primary: true });
      expect(await store().emailAddresses.setPrimary(jane.id, johns.id)).toBeUndefined();
      expect(await store().emailAddresses.setPrimary(jane.id, johns.id + 1000)).toBeUndefined();
      expect(await primariesOf(store(), jane.id)).toEqual([janes]);
      expect(await primariesOf(store(), john.id)).toEqual([johns]);
      expect((await store().users.findById(jane.id))?.email).toBe('jane@example.com');
    });

    it('keeps one primary when setPrimary calls for one user race', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const addresses: EmailAddress[] = [];
      for (let index = 0; index < 8; index += 1) {
        addresses.push(await store().emailAddresses.add({ userId: jane.id, email: `jane${index}@example.com`, verified: true, primary: index === 0 }));
      }
      const { values, codes } = await settleAll(addresses.map((address) => store().emailAddresses.setPrimary(jane.id, address.id)));
      expect(codes).toEqual([]);
      expect(values).toHaveLength(8);
      const primaries = await primariesOf(store(), jane.id);
      expect(primaries).toHaveLength(1);
      expect((await store().users.findById(jane.id))?.email).toBe(primaries[0]?.email);
    });

    if (usernameType === 'email') {
      it('setPrimary onto an address that is another user’s login is refused and changes nothing', async () => {
        const jane = await createUser(store(), usernameType, 'jane');
        await createUser(store(), usernameType, 'john');
        const janes = await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: true, primary: true });
        const claimed = await store().emailAddresses.add({ userId: jane.id, email: 'john@example.com', verified: false, primary: false });
        await expectLatchkeyError(store().emailAddresses.setPrimary(jane.id, claimed.id), 'email_taken');
        expect(await primariesOf(store(), jane.id)).toEqual([janes]);
        expect((await store().users.findById(jane.id))?.email).toBe('jane@example.com');
      });
    }

    it('searches a page of addresses newest first with their users, by the start of an address or a login, by flags and by ids', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john_doe', { email: 'jd@example.org' });
      const janes = await store().emailAddresses.add({ userId: jane.id, email: 'jane@example.com', verified: true, primary: true });
      const janesWork = await store().emailAddresses.add({ userId: jane.id, email: 'Jane.Work@Example.NET', verified: false, primary: false });
      const johns = await store().emailAddresses.add({ userId: john.id, email: 'a_b@example.org', verified: false, primary: false });
      const ids = (addresses: { id: number }[]) => addresses.map((address) => address.id);
      const all = await store().emailAddresses.search({ limit: 10 });
      expect(ids(all)).toEqual([johns.id, janesWork.id, janes.id]);
      expect(all[0]).toEqual({ ...johns, user: { id: john.id, username: usernameType === 'username' ? 'john_doe' : null, email: 'jd@example.org' } });
      expect(all[2]).toEqual({ ...janes, primary: true, user: { id: jane.id, username: usernameType === 'username' ? 'jane' : null, email: 'jane@example.com' } });
      // Keyset paging: the page after an id holds the older ones only.
      expect(ids(await store().emailAddresses.search({ limit: 2 }))).toEqual([johns.id, janesWork.id]);
      expect(ids(await store().emailAddresses.search({ afterId: janesWork.id, limit: 2 }))).toEqual([janes.id]);
      // The start of the address in any case, or of the user's email.
      expect(ids(await store().emailAddresses.search({ text: 'JANE.W', limit: 10 }))).toEqual([janesWork.id]);
      expect(ids(await store().emailAddresses.search({ text: 'jd@', limit: 10 }))).toEqual([johns.id]);
      expect(ids(await store().emailAddresses.search({ text: 'example', limit: 10 }))).toEqual([]);
      // LIKE's wildcards are only themselves.
      expect(ids(await store().emailAddresses.search({ text: 'a_', limit: 10 }))).toEqual([johns.id]);
      expect(ids(await store().emailAddresses.search({ text: '_', limit: 10 }))).toEqual([]);
      expect(ids(await store().emailAddresses.search({ text: '%', limit: 10 }))).toEqual([]);
      // The user's username where there are usernames.
      expect(ids(await store().emailAddresses.search({ text: 'JOHN_', limit: 10 }))).toEqual(usernameType === 'username' ? [johns.id] : []);
      expect(ids(await store().emailAddresses.search({ verified: false, limit: 10 }))).toEqual([johns.id, janesWork.id]);
      expect(ids(await store().emailAddresses.search({ primary: true, verified: true, limit: 10 }))).toEqual([janes.id]);
      expect(ids(await store().emailAddresses.search({ primary: false, limit: 10 }))).toEqual([johns.id, janesWork.id]);
      expect(ids(await store().emailAddresses.search({ ids: [janes.id, johns.id, johns.id + 1000], limit: 10 }))).toEqual([johns.id, janes.id]);
      expect(await store().emailAddresses.search({ ids: [], limit: 10 })).toEqual([]);
    });

    it('removes an address', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const address = await store().emailAddresses.add({ userId: jane.id, email: 'old@example.com', verified: false, primary: false });
      expect(await store().emailAddresses.remove(address.id)).toBe(true);
      expect(await store().emailAddresses.remove(address.id)).toBe(false);
      expect(await store().emailAddresses.listForUser(jane.id)).toEqual([]);
    });
  });
}
