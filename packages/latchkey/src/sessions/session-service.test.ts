import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../core/clock.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../testing/database.js';
import { SessionService } from './session-service.js';

const DAY = 86_400_000;
const SECRET_KEY = 'a-test-secret-key-that-is-long-enough-to-be-real-0123456789';

describe.each(testDatabaseKinds())('sessions on %s', (kind) => {
  let database: TestDatabase;
  let clock: ManualClock;
  let sessions: SessionService;
  let userId: number;

  beforeEach(async () => {
    database = await createTestDatabase(kind, 'username');
    clock = new ManualClock();
    sessions = new SessionService(database.store.sessions, clock, { absoluteLifetime: 14 * 86_400, idleTimeout: 7 * 86_400 }, SECRET_KEY);
    const user = await database.store.users.create({ username: 'ada', email: 'ada@example.com', password: '!', dateJoined: clock.now() });
    userId = user.id;
  });

  afterEach(() => database.destroy());

  it('issues 256-bit ids and stores only their hash, so a dump yields no live id', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) ids.add((await sessions.create({ userId })).id);
    expect(ids.size).toBe(50);
    for (const id of ids) expect(Buffer.from(id, 'base64url')).toHaveLength(32);
    const dump = JSON.stringify((await sql`select * from latchkey_sessions`.execute(database.kysely)).rows);
    for (const id of ids) expect(dump).not.toContain(id);
  });

  it('seals what a session keeps, so that a dump of the table, even with the secret key, opens none of it', async () => {
    const resetKey = 'reset-key-0123456789-abcdefghij';
    const session = await sessions.create({ userId: null, data: { _password_reset_key: resetKey } });
    await sessions.saveData(session, { ...session.data, pending: { code: 'ABC123' } });
    const dump = JSON.stringify((await sql`select * from latchkey_sessions`.execute(database.kysely)).rows);
    for (const secret of [resetKey, 'ABC123', '_password_reset_key', 'pending']) expect(dump).not.toContain(secret);
    expect(await sessions.load(session.id)).toMatchObject({ data: { _password_reset_key: resetKey, pending: { code: 'ABC123' } } });
    // Under another secret key (one since changed, or a copy's owner guessing), it opens as nothing.
    const otherKey = new SessionService(database.store.sessions, clock, { absoluteLifetime: 14 * 86_400, idleTimeout: 7 * 86_400 }, `${SECRET_KEY}-other`);
    expect((await otherKey.load(session.id))?.data).toEqual({});
  });

  it('opens nothing a row holds that was not sealed for its own id: a plain value, or another session’s data copied onto it', async () => {
    const victim = await sessions.create({ userId: null, data: { _password_reset_key: 'victim-key' } });
    const attacker = await sessions.create({ userId: null, data: { mine: true } });
    const victimRow = await database.store.sessions.find(victim.idHash);
    await database.store.sessions.update(attacker.idHash, { sealedData: victimRow!.sealedData });
    expect((await sessions.load(attacker.id))?.data).toEqual({});
    await database.store.sessions.update(attacker.idHash, { sealedData: JSON.stringify({ _password_reset_key: 'planted' }) });
    expect((await sessions.load(attacker.id))?.data).toEqual({});
  });

  it('carries the data over to a rotated session, sealed under its new id', async () => {
    const before = await sessions.create({ userId: null, data: { next: '/checkout/' } });
    const after = await sessions.rotate((await sessions.load(before.id))!);
    expect((await sessions.load(after.id))?.data).toEqual({ next: '/checkout/' });
    expect(await sessions.load(before.id)).toBeUndefined();
  });

  it('loads a live session and refuses unknown, malformed and oversized ids', async () => {
    const session = await sessions.create({ userId, data: { next: '/x' }, ipAddress: '127.0.0.1', userAgent: 'test' });
    expect(await sessions.load(session.id)).toMatchObject({ userId, data: { next: '/x' }, ipAddress: '127.0.0.1' });
    for (const id of [undefined, '', 'x', `${session.id}x`, session.id.replace(/.$/, '!'), 'a'.repeat(10_000)]) {
      expect(await sessions.load(id)).toBeUndefined();
    }
  });

  it('ends a session after the idle timeout, and keeps an active one alive until the absolute limit', async () => {
    const idle = await sessions.create({ userId });
    const active = await sessions.create({ userId });
    for (let day = 1; day <= 13; day++) {
      clock.advance(DAY);
      expect(await sessions.load(active.id), `day ${day}`).toBeDefined();
    }
    expect(await sessions.load(idle.id)).toBeUndefined();
    clock.advance(DAY);
    expect(await sessions.load(active.id)).toBeUndefined();
  });

  it('ends exactly at the idle limit and not a second before', async () => {
    const session = await sessions.create({ userId });
    clock.advance(7 * DAY - 1000);
    expect(await sessions.load(session.id)).toBeDefined();
    clock.advance(7 * DAY);
    expect(await sessions.load(session.id)).toBeUndefined();
  });

  it('reads the session and its user together, and none for a visitor', async () => {
    const signedIn = await sessions.create({ userId });
    const visitor = await sessions.create({ userId: null });
    expect((await sessions.load(signedIn.id))?.userAsLoaded).toEqual(await database.store.users.findById(userId));
    expect((await sessions.load(visitor.id))?.userAsLoaded).toBeUndefined();
  });

  it('stamps "last seen" at most once a minute, and the stamp is what the list shows', async () => {
    const session = await sessions.create({ userId });
    const storedLastSeen = async () => (await database.store.sessions.find(session.idHash))?.lastSeenAt;
    clock.advance(59_000);
    expect((await sessions.load(session.id))?.lastSeenAt).toEqual(session.createdAt);
    clock.advance(1_000);
    const stampedAt = clock.now();
    expect((await sessions.load(session.id))?.lastSeenAt).toEqual(stampedAt);
    expect((await sessions.listForUser(userId)).map((listed) => listed.lastSeenAt)).toEqual([stampedAt]);
    expect(await storedLastSeen()).toEqual(stampedAt);
    clock.advance(30_000);
    expect((await sessions.load(session.id))?.lastSeenAt).toEqual(stampedAt);
    expect(await storedLastSeen()).toEqual(stampedAt);
  });

  it('rotation gives a new id with the same state and kills the old id', async () => {
    const before = await sessions.create({ userId: null, data: { cart: 3 } });
    const after = await sessions.rotate(before, { userId });
    expect(after.id).not.toBe(before.id);
    expect(await sessions.load(before.id)).toBeUndefined();
    expect(await sessions.load(after.id)).toMatchObject({ userId, data: { cart: 3 } });
  });

  it('rotation keeps the absolute limit: a session rotated on day 10 still ends on day 14', async () => {
    const session = await sessions.create({ userId });
    // Used every few days, so the idle limit never ends it.
    clock.advance(5 * DAY);
    await sessions.load(session.id);
    clock.advance(5 * DAY);
    const rotated = await sessions.rotate((await sessions.load(session.id))!);
    expect(rotated.expiresAt).toEqual(session.expiresAt);
    clock.advance(3 * DAY);
    await sessions.load(rotated.id);
    clock.advance(DAY - 1000);
    expect(await sessions.load(rotated.id)).toBeDefined();
    clock.advance(1000);
    expect(await sessions.load(rotated.id)).toBeUndefined();
  });

  it("lists a user's sessions, ends the others but one, or all", async () => {
    const [a, b, c] = [await sessions.create({ userId }), await sessions.create({ userId }), await sessions.create({ userId })];
    expect((await sessions.listForUser(userId)).map((s) => s.idHash).sort()).toEqual([a.idHash, b.idHash, c.idHash].sort());
    expect(await sessions.endOthers(userId, b)).toBe(2);
    expect(await sessions.load(a.id)).toBeUndefined();
    expect(await sessions.load(b.id)).toBeDefined();
    expect(await sessions.endAll(userId)).toBe(1);
    expect(await sessions.load(b.id)).toBeUndefined();
  });

  it('saves data, and clears rows past the idle or the absolute limit', async () => {
    const session = await sessions.create({ userId });
    await sessions.saveData(session, { step: 'mfa' });
    expect((await sessions.load(session.id))?.data).toEqual({ step: 'mfa' });
    const active = await sessions.create({ userId });
    for (let day = 0; day < 7; day++) {
      clock.advance(DAY);
      await sessions.load(active.id);
    }
    expect(await sessions.deleteExpired()).toBe(1);
    clock.advance(7 * DAY);
    expect(await sessions.deleteExpired()).toBe(1);
    expect(await sessions.listForUser(userId)).toEqual([]);
  });
});
