import { describe, expect, it } from 'vitest';
import type { StoredSession } from '../../sessions/model.js';
import { createUser, expectLatchkeyError, useFreshDatabase, type ConformanceTarget } from './harness.js';

const CREATED = new Date('2030-01-01T00:00:00.000Z');

function storedSession(idHash: string, userId: number | null, overrides: Partial<StoredSession> = {}): StoredSession {
  return {
    idHash,
    userId,
    // The repository stores the sealed text as it is given (sessions/sealed-data.ts seals it).
    sealedData: 'v1.c2VhbGVkIGRhdGEgb2YgYSBzZXNzaW9u-Zoë ✓',
    createdAt: CREATED,
    lastSeenAt: new Date('2030-01-01T00:05:00.250Z'),
    expiresAt: new Date('2030-01-15T00:00:00.000Z'),
    ipAddress: '2001:db8::1',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chromium',
    ...overrides,
  };
}

export function describeSessionRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('SessionRepository', () => {
    const database = useFreshDatabase(target);
    const sessions = () => database().store.sessions;

    it('stores a session and finds it by id hash, with its sealed data and instants intact', async () => {
      const jane = await createUser(database().store, usernameType, 'jane');
      const session = storedSession('a'.repeat(64), jane.id);
      await sessions().create(session);
      expect(await sessions().find(session.idHash)).toEqual(session);
      expect(await sessions().find('b'.repeat(64))).toBeUndefined();
    });

    it('stores an anonymous session', async () => {
      const session = storedSession('anonymous', null, { sealedData: '' });
      await sessions().create(session);
      expect(await sessions().find('anonymous')).toEqual(session);
    });

    it('reads a session with its user in one call: the user as users.findById has it, none for a visitor, and inside a transaction its own writes', async () => {
      const jane = await createUser(database().store, usernameType, 'jane');
      const signedIn = storedSession('c'.repeat(64), jane.id);
      const visitor = storedSession('d'.repeat(64), null, { sealedData: '' });
      await sessions().create(signedIn);
      await sessions().create(visitor);
      expect(await sessions().findWithUser(signedIn.idHash)).toEqual({ session: signedIn, user: await database().store.users.findById(jane.id) });
      expect(await sessions().findWithUser(visitor.idHash)).toEqual({ session: visitor, user: undefined });
      expect(await sessions().findWithUser('e'.repeat(64))).toBeUndefined();
      const seenInside = await database().store.transaction(async (repositories) => {
        await repositories.sessions.delete(signedIn.idHash);
        await repositories.sessions.create(storedSession('f'.repeat(64), jane.id));
        return [await repositories.sessions.findWithUser(signedIn.idHash), (await repositories.sessions.findWithUser('f'.repeat(64)))?.user?.id];
      });
      expect(seenInside).toEqual([undefined, jane.id]);
      expect(await sessions().findWithUser(signedIn.idHash)).toBeUndefined();
    });

    it('refuses a session for a user who does not exist', async () => {
      await expectLatchkeyError(sessions().create(storedSession('orphan', 999_999)), 'not_found');
      expect(await sessions().find('orphan')).toBeUndefined();
    });

    it('updates each changeable field', async () => {
      const jane = await createUser(database().store, usernameType, 'jane');
      await sessions().create(storedSession('s1', null));
      const changes = {
        userId: jane.id,
        sealedData: 'v1.YW5vdGhlciBzZWFs',
        lastSeenAt: new Date('2030-01-02T00:00:00.000Z'),
        expiresAt: new Date('2030-01-03T00:00:00.000Z'),
      };
      expect(await sessions().update('s1', changes)).toBe(true);
      expect(await sessions().find('s1')).toEqual(storedSession('s1', null, changes));
      expect(await sessions().update('s1', { userId: null })).toBe(true);
      expect((await sessions().find('s1'))?.userId).toBeNull();
    });

    it('reports whether an update found the session, also with no changes', async () => {
      await sessions().create(storedSession('s1', null));
      expect(await sessions().update('missing', { sealedData: '' })).toBe(false);
      expect(await sessions().update('s1', {})).toBe(true);
      expect(await sessions().update('missing', {})).toBe(false);
    });

    it('deletes a session once', async () => {
      await sessions().create(storedSession('s1', null));
      expect(await sessions().delete('s1')).toBe(true);
      expect(await sessions().delete('s1')).toBe(false);
      expect(await sessions().find('s1')).toBeUndefined();
    });

    it('lists a user’s sessions, most recently seen first, and no one else’s', async () => {
      const jane = await createUser(database().store, usernameType, 'jane');
      const john = await createUser(database().store, usernameType, 'john');
      await sessions().create(storedSession('old', jane.id, { lastSeenAt: new Date('2030-01-01T01:00:00.000Z') }));
      await sessions().create(storedSession('new', jane.id, { lastSeenAt: new Date('2030-01-01T03:00:00.000Z') }));
      await sessions().create(storedSession('mid', jane.id, { lastSeenAt: new Date('2030-01-01T02:00:00.000Z') }));
      await sessions().create(storedSession('johns', john.id));
      await sessions().create(storedSession('anonymous', null));
      expect((await sessions().listForUser(jane.id)).map((session) => session.idHash)).toEqual(['new', 'mid', 'old']);
      expect(await sessions().listForUser(999_999)).toEqual([]);
    });

    it('ends every session of a user, or all but the current one', async () => {
      const jane = await createUser(database().store, usernameType, 'jane');
      const john = await createUser(database().store, usernameType, 'john');
      for (const idHash of ['j1', 'j2', 'j3']) await sessions().create(storedSession(idHash, jane.id));
      await sessions().create(storedSession('johns', john.id));
      await sessions().create(storedSession('anonymous', null));

      expect(await sessions().deleteForUser(jane.id, { exceptIdHash: 'j2' })).toBe(2);
      expect((await sessions().listForUser(jane.id)).map((session) => session.idHash)).toEqual(['j2']);
      expect(await sessions().deleteForUser(jane.id)).toBe(1);
      expect(await sessions().listForUser(jane.id)).toEqual([]);
      expect(await sessions().deleteForUser(jane.id)).toBe(0);
      expect(await sessions().find('johns')).toBeDefined();
      expect(await sessions().find('anonymous')).toBeDefined();
    });

    it('removes sessions whose expiry is at or before now, and only those', async () => {
      const now = new Date('2030-01-10T12:00:00.000Z');
      await sessions().create(storedSession('expired', null, { expiresAt: new Date('2030-01-10T11:59:59.999Z') }));
      await sessions().create(storedSession('expiring-now', null, { expiresAt: now }));
      await sessions().create(storedSession('alive', null, { expiresAt: new Date('2030-01-10T12:00:00.001Z') }));
      expect(await sessions().deleteExpired(now)).toBe(2);
      expect(await sessions().find('expired')).toBeUndefined();
      expect(await sessions().find('expiring-now')).toBeUndefined();
      expect(await sessions().find('alive')).toBeDefined();
      expect(await sessions().deleteExpired(now)).toBe(0);
    });

    it('also removes sessions idle since the cut-off when one is given', async () => {
      const now = new Date('2030-01-10T12:00:00.000Z');
      const cutoff = new Date('2030-01-03T12:00:00.000Z');
      const later = new Date('2030-02-01T00:00:00.000Z');
      await sessions().create(storedSession('idle', null, { lastSeenAt: cutoff, expiresAt: later }));
      await sessions().create(storedSession('recent', null, { lastSeenAt: new Date('2030-01-03T12:00:00.001Z'), expiresAt: later }));
      expect(await sessions().deleteExpired(now)).toBe(0);
      expect(await sessions().deleteExpired(now, cutoff)).toBe(1);
      expect(await sessions().find('idle')).toBeUndefined();
      expect(await sessions().find('recent')).toBeDefined();
    });

    it('lists a page of live signed-in sessions for the admin, most recently seen first, with their users and without their data', async () => {
      const jane = await createUser(database().store, usernameType, 'jane');
      const john = await createUser(database().store, usernameType, 'john', { email: 'john@example.org' });
      const now = new Date('2030-01-10T12:00:00.000Z');
      const idleSince = new Date('2030-01-09T12:00:00.000Z');
      const at = (hour: number) => new Date(Date.UTC(2030, 0, 10, hour));
      const later = new Date('2030-02-01T00:00:00.000Z');
      await sessions().create(storedSession('a1', jane.id, { lastSeenAt: at(9), expiresAt: later }));
      await sessions().create(storedSession('b2', john.id, { lastSeenAt: at(11), expiresAt: later }));
      // Two seen at the same instant: the id hash orders them, so paging neither skips nor repeats one.
      await sessions().create(storedSession('c3', jane.id, { lastSeenAt: at(10), expiresAt: later }));
      await sessions().create(storedSession('c2', john.id, { lastSeenAt: at(10), expiresAt: later }));
      await sessions().create(storedSession('d4', null, { lastSeenAt: at(11), expiresAt: later }));
      // Over already, though not yet removed: past the absolute expiry, and idle since the cut-off.
      await sessions().create(storedSession('e5', jane.id, { lastSeenAt: at(11), expiresAt: now }));
      await sessions().create(storedSession('f6', jane.id, { lastSeenAt: idleSince, expiresAt: later }));
      const page = (query: Partial<Parameters<ReturnType<typeof sessions>['search']>[0]> = {}) => sessions().search({ now, idleSince, limit: 10, ...query });
      const hashes = (listed: { idHash: string }[]) => listed.map((session) => session.idHash);

      const all = await page();
      expect(hashes(all)).toEqual(['b2', 'c2', 'c3', 'a1']);
      expect(all[0]).toEqual({
        idHash: 'b2',
        userId: john.id,
        createdAt: CREATED,
        lastSeenAt: at(11),
        expiresAt: later,
        ipAddress: '2001:db8::1',
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chromium',
        user: { id: john.id, username: usernameType === 'username' ? 'john' : null, email: 'john@example.org' },
      });
      expect(all[0]).not.toHaveProperty('data');
      expect(hashes(await page({ userId: jane.id }))).toEqual(['c3', 'a1']);
      expect(await page({ userId: 999_999 })).toEqual([]);

      // Keyset paging: each page continues after the last session of the one before.
      const first = await page({ limit: 2 });
      expect(hashes(first)).toEqual(['b2', 'c2']);
      const second = await page({ limit: 2, after: first[1]! });
      expect(hashes(second)).toEqual(['c3', 'a1']);
      expect(await page({ limit: 2, after: second[1]! })).toEqual([]);
      expect(hashes(await page({ userId: jane.id, after: { lastSeenAt: at(10), idHash: 'c2' } }))).toEqual(['c3', 'a1']);
    });

    it('ends a user’s sessions when the user is deleted', async () => {
      const jane = await createUser(database().store, usernameType, 'jane');
      await sessions().create(storedSession('j1', jane.id));
      await database().store.users.delete(jane.id);
      expect(await sessions().find('j1')).toBeUndefined();
    });
  });
}
