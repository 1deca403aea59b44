/**
 * latchkey.apiTokens as a project's code uses it: one key per user, the user a key belongs to,
 * and deletion taking effect at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('latchkey.apiTokens on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function ada() {
    latchkey = await createTestLatchkey({ kind });
    return latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  it('issue makes a key and returns the same key the second time', async () => {
    const user = await ada();
    const key = await latchkey.apiTokens.issue(user);
    expect(key).toMatch(/^[0-9a-f]{40}$/);
    expect(await latchkey.apiTokens.issue(user)).toBe(key);
  });

  it('records api_token_created once, when the token is made', async () => {
    const user = await ada();
    await latchkey.apiTokens.issue(user, client);
    await latchkey.apiTokens.issue(user, client);
    const created = (await latchkey.audit.listForUser(user)).filter((record) => record.event === 'api_token_created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ userId: user.id, ipAddress: client.ip, userAgent: client.userAgent });
  });

  it('userFor returns the user the key belongs to', async () => {
    const user = await ada();
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    const adaKey = await latchkey.apiTokens.issue(user);
    const graceKey = await latchkey.apiTokens.issue(grace);
    expect(adaKey).not.toBe(graceKey);
    expect((await latchkey.apiTokens.userFor(adaKey))?.id).toBe(user.id);
    expect((await latchkey.apiTokens.userFor(graceKey))?.id).toBe(grace.id);
  });

  it('userFor returns undefined for an unknown or malformed key', async () => {
    const user = await ada();
    const key = await latchkey.apiTokens.issue(user);
    expect(await latchkey.apiTokens.userFor('0'.repeat(40))).toBeUndefined();
    expect(await latchkey.apiTokens.userFor(key.toUpperCase())).toBeUndefined();
    expect(await latchkey.apiTokens.userFor(key.slice(1))).toBeUndefined();
    expect(await latchkey.apiTokens.userFor('')).toBeUndefined();
  });

  it('delete stops the key at once, says whether there was a token, and is recorded', async () => {
    const user = await ada();
    const key = await latchkey.apiTokens.issue(user);

    expect(await latchkey.apiTokens.delete(user, client)).toBe(true);

    expect(await latchkey.apiTokens.userFor(key)).toBeUndefined();
    expect(await latchkey.apiTokens.delete(user, client)).toBe(false);
    const deleted = (await latchkey.audit.listForUser(user)).filter((record) => record.event === 'api_token_deleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ ipAddress: client.ip, userAgent: client.userAgent });
  });

  it('issue after delete makes a new key, and the old one stays refused', async () => {
    const user = await ada();
    const old = await latchkey.apiTokens.issue(user);
    await latchkey.apiTokens.delete(user);
    const renewed = await latchkey.apiTokens.issue(user);
    expect(renewed).not.toBe(old);
    expect((await latchkey.apiTokens.userFor(renewed))?.id).toBe(user.id);
    expect(await latchkey.apiTokens.userFor(old)).toBeUndefined();
  });

  it("delete of one user's token leaves another's working", async () => {
    const user = await ada();
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.apiTokens.issue(user);
    const graceKey = await latchkey.apiTokens.issue(grace);
    await latchkey.apiTokens.delete(user);
    expect((await latchkey.apiTokens.userFor(graceKey))?.id).toBe(grace.id);
  });

  it("refuses an inactive user's key", async () => {
    const user = await ada();
    await latchkey.users.deactivate(user);
    const inactive = await latchkey.users.findById(user.id);
    expect(inactive?.isActive).toBe(false);

    // A key issued to the inactive account (deactivation deleted any earlier one) still logs nobody in.
    const key = await latchkey.apiTokens.issue(inactive ?? user);
    expect(key).toMatch(/^[0-9a-f]{40}$/);
    expect(await latchkey.apiTokens.userFor(key)).toBeUndefined();
  });
});
