/**
 * latchkey.sessions as a project's code uses it: starting a signed-in session, listing a user's
 * sessions without their secrets, ending some or all of them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('latchkey.sessions on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function twoUsers() {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    return { ada, grace };
  }

  it('startSignedIn starts a session that listForUser shows, without any secret', async () => {
    const { ada } = await twoUsers();
    const startedAt = latchkey.clock.now();

    const { cookieValue } = await latchkey.sessions.startSignedIn(ada);
    expect(cookieValue).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const sessions = await latchkey.sessions.listForUser(ada);
    expect(sessions).toHaveLength(1);
    const [session] = sessions;
    expect(Object.keys(session ?? {}).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'ipAddress', 'lastSeenAt', 'userAgent']);
    expect(session).toEqual({
      id: expect.any(Number) as number,
      createdAt: startedAt,
      lastSeenAt: startedAt,
      expiresAt: new Date(startedAt.getTime() + latchkey.settings.SESSION_COOKIE_AGE * 1000),
      ipAddress: '',
      userAgent: '',
    });
    expect(Number.isSafeInteger(session?.id)).toBe(true);
    expect(JSON.stringify(sessions)).not.toContain(cookieValue);
  });

  it('gives each started session a cookie value of its own', async () => {
    const { ada } = await twoUsers();
    const first = await latchkey.sessions.startSignedIn(ada);
    const second = await latchkey.sessions.startSignedIn(ada);
    expect(first.cookieValue).not.toBe(second.cookieValue);
    const ids = (await latchkey.sessions.listForUser(ada)).map((session) => session.id);
    expect(new Set(ids).size).toBe(2);
  });

  it('lists the most recently seen session first', async () => {
    const { ada } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    const olderAt = latchkey.clock.now();
    latchkey.clock.advance(60_000);
    await latchkey.sessions.startSignedIn(ada);
    const newerAt = latchkey.clock.now();

    expect((await latchkey.sessions.listForUser(ada)).map((session) => session.lastSeenAt)).toEqual([newerAt, olderAt]);
  });

  it("lists only the user's own sessions", async () => {
    const { ada, grace } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(grace);
    await latchkey.sessions.startSignedIn(grace);
    expect(await latchkey.sessions.listForUser(ada)).toHaveLength(1);
    expect(await latchkey.sessions.listForUser(grace)).toHaveLength(2);
  });

  it('lists live sessions only: one idle past SESSION_IDLE_TIMEOUT is over', async () => {
    const { ada } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    latchkey.clock.advance(latchkey.settings.SESSION_IDLE_TIMEOUT * 1000);
    expect(await latchkey.sessions.listForUser(ada)).toEqual([]);
  });

  it('end with one of the user’s session ids ends that session only', async () => {
    const { ada } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    latchkey.clock.advance(1000);
    await latchkey.sessions.startSignedIn(ada);
    const [newest, oldest] = await latchkey.sessions.listForUser(ada);

    expect(await latchkey.sessions.end(ada, [newest?.id ?? -1])).toBe(1);

    expect((await latchkey.sessions.listForUser(ada)).map((session) => session.id)).toEqual([oldest?.id]);
  });

  it("end with another user's session id ends nothing", async () => {
    const { ada, grace } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(grace);
    const [graceSession] = await latchkey.sessions.listForUser(grace);

    expect(await latchkey.sessions.end(ada, [graceSession?.id ?? -1])).toBe(0);

    expect(await latchkey.sessions.listForUser(grace)).toEqual([graceSession]);
    expect(await latchkey.sessions.listForUser(ada)).toHaveLength(1);
  });

  it('end with an id of no session, or none at all, ends nothing', async () => {
    const { ada } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    expect(await latchkey.sessions.end(ada, [])).toBe(0);
    expect(await latchkey.sessions.end(ada, [0, 12345])).toBe(0);
    expect(await latchkey.sessions.listForUser(ada)).toHaveLength(1);
  });

  it('end with several ids ends each of them and counts them', async () => {
    const { ada } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(ada);
    const ids = (await latchkey.sessions.listForUser(ada)).map((session) => session.id);
    expect(await latchkey.sessions.end(ada, ids.slice(0, 2))).toBe(2);
    expect((await latchkey.sessions.listForUser(ada)).map((session) => session.id)).toEqual(ids.slice(2));
  });

  it("endAll signs the user out everywhere, counts the sessions, and leaves others' alone", async () => {
    const { ada, grace } = await twoUsers();
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(grace);

    expect(await latchkey.sessions.endAll(ada)).toBe(2);

    expect(await latchkey.sessions.listForUser(ada)).toEqual([]);
    expect(await latchkey.sessions.listForUser(grace)).toHaveLength(1);
    expect(await latchkey.sessions.endAll(ada)).toBe(0);
  });
});
