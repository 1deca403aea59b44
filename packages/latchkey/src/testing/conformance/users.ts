import { describe, expect, it } from 'vitest';
import { createUser, expectLatchkeyError, JOINED, newUser, settleAll, useFreshDatabase, type ConformanceTarget } from './harness.js';
import { describeUserSearch } from './user-search.js';

export function describeUserRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('UserRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;

    it('creates a user with defaults, normalizes the email and finds it by id', async () => {
      const user = await createUser(store(), usernameType, 'jane', { email: ' Jane@Example.COM ' });
      expect(typeof user.id).toBe('number');
      expect(user).toEqual({
        id: user.id,
        username: usernameType === 'username' ? 'jane' : null,
        email: 'jane@example.com',
        name: '',
        password: newUser(usernameType, 'jane').password,
        isActive: true,
        isStaff: false,
        isSuperuser: false,
        dateJoined: JOINED,
        lastLogin: null,
        language: '',
      });
      expect(await store().users.findById(user.id)).toEqual(user);
      expect(await store().users.findById(user.id + 1000)).toBeUndefined();
    });

    it('stores the flags and name it is given', async () => {
      const user = await createUser(store(), usernameType, 'root', { name: 'Root <b>', isActive: false, isStaff: true, isSuperuser: true });
      expect(user).toMatchObject({ name: 'Root <b>', isActive: false, isStaff: true, isSuperuser: true });
      expect(await store().users.findById(user.id)).toEqual(user);
    });

    it('finds by email in any case, and finds nothing for an unknown or invalid address', async () => {
      const user = await createUser(store(), usernameType, 'jane');
      expect(await store().users.findByEmail('JANE@example.com')).toEqual(user);
      expect(await store().users.findByEmail('ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ')).toEqual(user);
      expect(await store().users.findByEmail('john@example.com')).toBeUndefined();
      expect(await store().users.findByEmail('jane@example.com,x@evil.com')).toBeUndefined();
      expect(await store().users.findByEmail('')).toBeUndefined();
    });

    it('refuses an address that cannot be normalized', async () => {
      await expectLatchkeyError(store().users.create(newUser(usernameType, 'jane', { email: '"jane"@example.com' })), 'invalid_email');
      expect(await store().users.count()).toBe(0);
    });

    if (usernameType === 'username') {
      it('is unique on the normalized username: "ＡＤＭＩＮ" collides with "admin"', async () => {
        const admin = await createUser(store(), usernameType, 'admin');
        for (const variant of ['ＡＤＭＩＮ', 'Admin', 'ADMIN', 'admın']) {
          const error = await expectLatchkeyError(createUser(store(), usernameType, variant, { email: 'other@example.com' }), 'username_taken');
          expect(error.param).toBe('username');
        }
        expect(await store().users.count()).toBe(1);
        expect(await store().users.findByUsername('ＡＤＭＩＮ')).toEqual(admin);
        expect(await store().users.findByUsername('Admin')).toEqual(admin);
      });

      it('folds the Kelvin sign with k and keeps the display form', async () => {
        const kate = await createUser(store(), usernameType, '\u212Aate');
        expect(kate.username).toBe('\u212Aate');
        expect(await store().users.findByUsername('kate')).toEqual(kate);
        await expectLatchkeyError(createUser(store(), usernameType, 'KATE', { email: 'k2@example.com' }), 'username_taken');
      });

      it('lets 20 parallel signups with one username in different forms create exactly one user', async () => {
        const variants = Array.from({ length: 20 }, (_, index) => ['admin', 'ADMIN', 'Admin', 'ＡＤＭＩＮ'][index % 4] ?? 'admin');
        const { values, codes } = await settleAll(
          variants.map((variant, index) => createUser(store(), usernameType, variant, { email: `a${index}@example.com` })),
        );
        expect(values).toHaveLength(1);
        expect(codes).toEqual(Array.from({ length: 19 }, () => 'username_taken'));
      });

      it('requires a username', async () => {
        await expectLatchkeyError(store().users.create(newUser(usernameType, 'jane', { username: undefined })), 'invalid_username');
      });

      it('allows users without an email and users sharing one; findByEmail answers with the oldest', async () => {
        await createUser(store(), usernameType, 'first', { email: '' });
        await createUser(store(), usernameType, 'second', { email: '' });
        const older = await createUser(store(), usernameType, 'third', { email: 'shared@example.com' });
        await createUser(store(), usernameType, 'fourth', { email: 'Shared@example.com' });
        expect(await store().users.count()).toBe(4);
        expect(await store().users.findByEmail('shared@example.com')).toEqual(older);
      });
    } else {
      it('has no usernames: a given username is refused and findByUsername finds nothing', async () => {
        await expectLatchkeyError(store().users.create({ ...newUser(usernameType, 'jane'), username: 'jane' }), 'invalid_input');
        await createUser(store(), usernameType, 'jane');
        expect(await store().users.findByUsername('jane')).toBeUndefined();
      });

      it('requires an email', async () => {
        await expectLatchkeyError(createUser(store(), usernameType, 'jane', { email: '' }), 'invalid_email');
      });

      it('is unique on the normalized email', async () => {
        await createUser(store(), usernameType, 'jane');
        const error = await expectLatchkeyError(createUser(store(), usernameType, 'x', { email: 'JANE@EXAMPLE.COM' }), 'email_taken');
        expect(error.param).toBe('email');
      });

      it('lets 20 parallel signups with one email in different cases create exactly one user', async () => {
        const spellings = Array.from({ length: 20 }, (_, index) => `${index % 2 === 0 ? 'VICTIM' : 'victim'}@${index % 3 === 0 ? 'Example.com' : 'example.COM'}`);
        const { values, codes } = await settleAll(spellings.map((email) => createUser(store(), usernameType, 'victim', { email })));
        expect(values).toHaveLength(1);
        expect(codes).toEqual(Array.from({ length: 19 }, () => 'email_taken'));
        expect(await store().users.count()).toBe(1);
      });

      it('refuses an update onto another user’s email', async () => {
        await createUser(store(), usernameType, 'jane');
        const john = await createUser(store(), usernameType, 'john');
        await expectLatchkeyError(store().users.update(john.id, { email: 'Jane@example.com' }), 'email_taken');
        expect((await store().users.findById(john.id))?.email).toBe('john@example.com');
      });
    }

    it('updates every changeable field and returns the result', async () => {
      const user = await createUser(store(), usernameType, 'jane');
      const lastLogin = new Date('2030-02-03T04:05:06.789Z');
      const changes = { name: 'Jane Doe', email: 'Jane.Doe@Example.com', password: 'pbkdf2_sha256$1$s$h', isActive: false, isStaff: true, isSuperuser: true, lastLogin };
      const updated = await store().users.update(user.id, changes);
      expect(updated).toEqual({ ...user, ...changes, email: 'jane.doe@example.com' });
      expect(await store().users.findById(user.id)).toEqual(updated);
      expect(await store().users.update(user.id, { lastLogin: null })).toMatchObject({ lastLogin: null });
    });

    it('returns the user unchanged for no changes, and undefined for an unknown id', async () => {
      const user = await createUser(store(), usernameType, 'jane');
      expect(await store().users.update(user.id, {})).toEqual(user);
      expect(await store().users.update(user.id + 1000, { name: 'x' })).toBeUndefined();
      expect(await store().users.update(user.id + 1000, {})).toBeUndefined();
    });

    it('replaces a password only while it is still the expected one', async () => {
      const user = await createUser(store(), usernameType, 'jane', { password: 'old-hash' });
      // A password change lands between the login's verification and its rehash.
      await store().users.update(user.id, { password: 'changed-hash' });
      expect(await store().users.replacePassword(user.id, 'old-hash', 'rehashed-old')).toBe(false);
      expect((await store().users.findById(user.id))?.password).toBe('changed-hash');
      expect(await store().users.replacePassword(user.id, 'changed-hash', 'rehashed')).toBe(true);
      expect((await store().users.findById(user.id))?.password).toBe('rehashed');
      expect(await store().users.replacePassword(user.id + 1000, 'rehashed', 'x')).toBe(false);
    });

    it('deletes a user with its email addresses and sessions, and counts users', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: true, primary: true });
      const session = { createdAt: JOINED, lastSeenAt: JOINED, expiresAt: JOINED, ipAddress: '127.0.0.1', userAgent: 'test', sealedData: '' };
      await store().sessions.create({ ...session, idHash: 'jane-session', userId: jane.id });
      await store().sessions.create({ ...session, idHash: 'john-session', userId: john.id });
      expect(await store().users.count()).toBe(2);

      expect(await store().users.delete(jane.id)).toBe(true);
      expect(await store().users.delete(jane.id)).toBe(false);
      expect(await store().users.findById(jane.id)).toBeUndefined();
      expect(await store().emailAddresses.listByEmail(jane.email)).toEqual([]);
      expect(await store().sessions.find('jane-session')).toBeUndefined();
      expect(await store().sessions.find('john-session')).toBeDefined();
      expect(await store().users.count()).toBe(1);
    });

    it('searches a page of users by id, by the start of a username or address, and by flags', async () => {
      const jane = await createUser(store(), usernameType, 'jane', { email: 'jane@example.com' });
      const root = await createUser(store(), usernameType, 'root', { email: 'root@example.org', isStaff: true, isSuperuser: true });
      const odd = await createUser(store(), usernameType, 'a_b', { email: 'a_b@example.net', isActive: false });
      const ids = (users: { id: number }[]) => users.map((user) => user.id);
      expect(ids(await store().users.search({ order: '-id', limit: 10 }))).toEqual([odd.id, root.id, jane.id]);
      expect(ids(await store().users.search({ order: 'id', limit: 2 }))).toEqual([jane.id, root.id]);
      expect(ids(await store().users.search({ order: 'id', afterId: root.id, limit: 2 }))).toEqual([odd.id]);
      expect(ids(await store().users.search({ order: '-id', afterId: root.id, limit: 2 }))).toEqual([jane.id]);
      // The start of the address in any case; of the username too where there are usernames.
      expect(ids(await store().users.search({ text: 'ROOT@EX', order: 'id', limit: 10 }))).toEqual([root.id]);
      expect(ids(await store().users.search({ text: 'ja', order: 'id', limit: 10 }))).toEqual([jane.id]);
      // LIKE's wildcards are only themselves: "a_" finds "a_b" and "_" finds nothing.
      expect(ids(await store().users.search({ text: 'a_', order: 'id', limit: 10 }))).toEqual([odd.id]);
      expect(ids(await store().users.search({ text: '_', order: 'id', limit: 10 }))).toEqual([]);
      expect(ids(await store().users.search({ text: '%', order: 'id', limit: 10 }))).toEqual([]);
      expect(ids(await store().users.search({ isStaff: true, order: 'id', limit: 10 }))).toEqual([root.id]);
      expect(ids(await store().users.search({ isSuperuser: false, isActive: true, order: 'id', limit: 10 }))).toEqual([jane.id]);
    });

    it('never reuses the id of a deleted user', async () => {
      const first = await createUser(store(), usernameType, 'jane');
      await store().users.delete(first.id);
      const second = await createUser(store(), usernameType, 'john');
      expect(second.id).toBeGreaterThan(first.id);
    });
  });

  describeUserSearch(target);
}
