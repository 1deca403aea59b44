import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { createUser, JOINED, newUser, useFreshDatabase, type ConformanceTarget } from './harness.js';

class FaultInjected extends Error {}

/** What a call through the outer store from inside the work must fail with: a programming error naming the fix. */
function expectMisuse(reason: unknown, message: string | RegExp = 'use the repositories passed to transaction()'): void {
  expect(reason).toBeInstanceOf(Error);
  expect(isLatchkeyError(reason)).toBe(false);
  expect((reason as Error).message).toMatch(message);
}

export function describeStoreTransactions(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('Store.transaction', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;

    it('commits every row when the work resolves, and returns its value', async () => {
      const userId = await store().transaction(async (repositories) => {
        const user = await repositories.users.create(newUser(usernameType, 'jane'));
        await repositories.emailAddresses.add({ userId: user.id, email: user.email, verified: false, primary: true });
        return user.id;
      });
      expect(await store().users.findById(userId)).toBeDefined();
      expect(await store().emailAddresses.listForUser(userId)).toHaveLength(1);
    });

    it('rolls back the user when the work throws after creating it, before the email row', async () => {
      const failure = store().transaction(async (repositories) => {
        await repositories.users.create(newUser(usernameType, 'jane'));
        throw new FaultInjected('crash before the email row');
      });
      await expect(failure).rejects.toBeInstanceOf(FaultInjected);
      expect(await store().users.count()).toBe(0);
      expect(await store().users.findByEmail('jane@example.com')).toBeUndefined();
      // The signup can be retried.
      await store().transaction((repositories) => repositories.users.create(newUser(usernameType, 'jane')));
      expect(await store().users.count()).toBe(1);
    });

    it('rolls back writes across every repository, including setPrimary', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const original = await store().emailAddresses.add({ userId: jane.id, email: jane.email, verified: true, primary: true });
      const other = await store().emailAddresses.add({ userId: jane.id, email: 'jane2@example.com', verified: false, primary: false });
      const session = { idHash: 's1', userId: jane.id, sealedData: '', createdAt: JOINED, lastSeenAt: JOINED, expiresAt: JOINED, ipAddress: '', userAgent: '' };

      const failure = store().transaction(async (repositories) => {
        await repositories.users.update(jane.id, { name: 'Changed', password: 'new-hash' });
        await repositories.emailAddresses.markVerified(other.id);
        await repositories.emailAddresses.setPrimary(jane.id, other.id);
        await repositories.sessions.create(session);
        await repositories.users.create(newUser(usernameType, 'john'));
        throw new FaultInjected('crash before commit');
      });
      await expect(failure).rejects.toBeInstanceOf(FaultInjected);

      expect(await store().users.findById(jane.id)).toEqual(jane);
      expect(await store().emailAddresses.listForUser(jane.id)).toEqual([original, other]);
      expect(await store().sessions.find('s1')).toBeUndefined();
      expect(await store().users.count()).toBe(1);
    });

    it('rolls back a password change and the sessions it ended', async () => {
      const jane = await createUser(store(), usernameType, 'jane', { password: 'old-hash' });
      const session = { userId: jane.id, sealedData: '', createdAt: JOINED, lastSeenAt: JOINED, expiresAt: JOINED, ipAddress: '', userAgent: '' };
      await store().sessions.create({ ...session, idHash: 'current' });
      await store().sessions.create({ ...session, idHash: 'other' });
      const failure = store().transaction(async (repositories) => {
        await repositories.users.replacePassword(jane.id, 'old-hash', 'new-hash');
        await repositories.sessions.deleteForUser(jane.id, { exceptIdHash: 'current' });
        throw new FaultInjected('crash mid password change');
      });
      await expect(failure).rejects.toBeInstanceOf(FaultInjected);
      expect((await store().users.findById(jane.id))?.password).toBe('old-hash');
      expect(await store().sessions.find('other')).toBeDefined();
    });

    it('lets the work catch a refused write and go on in the same transaction', async () => {
      // On PostgreSQL a failed statement would abort the transaction; the repositories guard each
      // constrained write with a savepoint so both databases behave alike.
      await createUser(store(), usernameType, 'jane');
      const created = await store().transaction(async (repositories) => {
        try {
          await repositories.users.create(newUser(usernameType, 'jane'));
          throw new Error('expected a refusal');
        } catch (error) {
          if (!isLatchkeyError(error, usernameType === 'username' ? 'username_taken' : 'email_taken')) throw error;
        }
        return repositories.users.create(newUser(usernameType, 'jane2'));
      });
      expect(await store().users.findById(created.id)).toEqual(created);
      expect(await store().users.count()).toBe(2);
    });

    it('refuses at once a call through the outer store from inside the work, on every repository', async () => {
      // On SQLite such a call would wait for the transaction to end, forever; on PostgreSQL it would
      // run on another connection, outside the transaction. Both refuse it alike instead.
      const jane = await createUser(store(), usernameType, 'jane');
      const outerCalls = await store().transaction(async (repositories) => {
        const outcomes = await Promise.allSettled([
          store().users.findById(jane.id),
          store().users.create(newUser(usernameType, 'john')),
          store().emailAddresses.listForUser(jane.id),
          store().sessions.listForUser(jane.id),
          store().socialApps.list(),
          store().socialAccounts.listForUser(jane.id),
          store().socialTokens.listForAccount(1),
          store().adminPermissions.listForUser(jane.id),
        ]);
        // The work's own repositories are unaffected, and the transaction commits.
        await repositories.users.update(jane.id, { name: 'Jane Doe' });
        return outcomes;
      });
      for (const outcome of outerCalls) {
        expect(outcome.status).toBe('rejected');
        expectMisuse((outcome as PromiseRejectedResult).reason);
      }
      expect((await store().users.findById(jane.id))?.name).toBe('Jane Doe');
      expect(await store().users.count()).toBe(1);
    });

    it('rolls back when the work lets the refusal of an outer-store call escape', async () => {
      const failure = store().transaction(async (repositories) => {
        await repositories.users.create(newUser(usernameType, 'jane'));
        return store().users.count();
      });
      expectMisuse(await failure.catch((reason: unknown) => reason), /^store\.users\.count\(\) was called from inside the work of Store\.transaction\(\)/);
      expect(await store().users.count()).toBe(0);
    });

    it('refuses a nested transaction instead of waiting for the outer one', async () => {
      const failure = store().transaction(async (repositories) => {
        await repositories.users.create(newUser(usernameType, 'jane'));
        return store().transaction((inner) => inner.users.count());
      });
      const reason = await failure.catch((caught: unknown) => caught);
      expectMisuse(reason);
      expectMisuse(reason, 'transactions do not nest');
      expect(await store().users.count()).toBe(0);
    });

    it('leaves calls from outside the work alone, during the transaction and after it', async () => {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      let started: () => void = () => undefined;
      const inside = new Promise<void>((resolve) => (started = resolve));
      let detached: Promise<number> | undefined;
      const transaction = store().transaction(async (repositories) => {
        await repositories.users.create(newUser(usernameType, 'jane'));
        // A task the work starts and leaves running may use the store once the work has settled.
        detached = (async () => {
          await transaction;
          return store().users.count();
        })();
        started();
        await held;
      });
      await inside;
      // Concurrent with the open transaction, from another async context: it runs (on SQLite, once
      // the transaction has ended).
      const outside = store().sessions.find('no-such-session');
      release();
      await transaction;
      await expect(outside).resolves.toBeUndefined();
      expect(await detached).toBe(1);
      expect(await store().transaction((repositories) => repositories.users.count())).toBe(1);
    });

    it('keeps concurrent transactions apart', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, index) =>
          store().transaction(async (repositories) => {
            const user = await repositories.users.create(newUser(usernameType, `user${index}`));
            await repositories.emailAddresses.add({ userId: user.id, email: user.email, verified: true, primary: true });
            if (index % 2 === 1) throw new FaultInjected(`user${index} fails`);
            return user.id;
          }),
        ),
      );
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(3);
      expect(await store().users.count()).toBe(3);
      for (const index of [0, 2, 4]) {
        const user = await store().users.findByEmail(`user${index}@example.com`);
        expect(await store().emailAddresses.listForUser(user!.id)).toHaveLength(1);
      }
      expect(await store().emailAddresses.findVerified('user1@example.com')).toBeUndefined();
    });
  });
}
