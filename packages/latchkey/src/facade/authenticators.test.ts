/**
 * latchkey.authenticators as a project's code uses it: a read-only view of a user's second
 * factors, without their secrets, and whether login asks for one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor } from '../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('latchkey.authenticators on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('lists nothing and asks for no second factor before one is added', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect(await latchkey.authenticators.listForUser(ada)).toEqual([]);
    expect(await latchkey.authenticators.hasSecondFactor(ada)).toBe(false);
  });

  it('lists the authenticator app and the recovery codes once TOTP is active, and then asks for a second factor', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const activatedAt = latchkey.clock.now();

    await activateTotpFor(latchkey, ada);

    const summaries = await latchkey.authenticators.listForUser(ada);
    expect(summaries.map((summary) => summary.type).sort()).toEqual(['recovery_codes', 'totp']);
    for (const summary of summaries) {
      expect(summary).toEqual({ id: expect.any(Number) as number, type: summary.type, createdAt: activatedAt, lastUsedAt: summary.lastUsedAt });
      expect(summary.lastUsedAt === null || summary.lastUsedAt instanceof Date).toBe(true);
    }
    expect(await latchkey.authenticators.hasSecondFactor(ada)).toBe(true);
  });

  it('shows no secret: the summaries have no data field, and no TOTP secret or recovery code appears', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const { secret, recoveryCodes } = await activateTotpFor(latchkey, ada);

    const summaries = await latchkey.authenticators.listForUser(ada);
    for (const summary of summaries) {
      expect(Object.keys(summary).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'type']);
      expect(summary).not.toHaveProperty('data');
    }
    const shown = JSON.stringify(summaries);
    expect(shown).not.toContain(secret);
    for (const code of recoveryCodes) expect(shown).not.toContain(code);
  });

  it("answers for the user asked about only: another user's authenticators are not theirs", async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await activateTotpFor(latchkey, ada);
    expect(await latchkey.authenticators.listForUser(grace)).toEqual([]);
    expect(await latchkey.authenticators.hasSecondFactor(grace)).toBe(false);
  });
});
