import { afterEach, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import type { User } from '../model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { createUser } from '../users.js';
import { addEmailAddress, makePrimaryEmailAddress, removeEmailAddress, resendEmailConfirmation, resendLoginVerification, WAIT_BEFORE_RESENDING } from './manage-email.js';
import { REAUTHENTICATION_WINDOW_SECONDS } from './reauthenticate.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('email management flows on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp() {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional' } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }
  const secondsAgo = (seconds: number) => new Date(latchkey.clock.now().getTime() - seconds * 1000);
  const addresses = async () => (await latchkey.deps.store.emailAddresses.listForUser(ada.id)).map((address) => [address.email, address.primary, address.verified]);

  it('refuses every change without a login or reauthentication in the last 5 minutes, and changes nothing', async () => {
    await setUp();
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: true, primary: false });
    const before = await addresses();
    for (const lastAuthenticatedAt of [undefined, secondsAgo(REAUTHENTICATION_WINDOW_SECONDS + 1)]) {
      const input = { user: ada, client, lastAuthenticatedAt };
      await expect(addEmailAddress(latchkey.deps, { ...input, email: 'new@example.com' })).rejects.toMatchObject({ code: 'reauthentication_required' });
      await expect(removeEmailAddress(latchkey.deps, { ...input, email: 'second@example.com' })).rejects.toMatchObject({ code: 'reauthentication_required' });
      await expect(makePrimaryEmailAddress(latchkey.deps, { ...input, email: 'second@example.com' })).rejects.toMatchObject({ code: 'reauthentication_required' });
    }
    expect(await addresses()).toEqual(before);
    expect(latchkey.mailer.outbox).toEqual([]);
  });

  it('accepts a change at the edge of the window', async () => {
    await setUp();
    const result = await addEmailAddress(latchkey.deps, { user: ada, client, email: 'new@example.com', lastAuthenticatedAt: secondsAgo(REAUTHENTICATION_WINDOW_SECONDS) });
    expect(result).toEqual({ email: 'new@example.com', mailFailed: false });
    expect(await addresses()).toEqual([
      ['ada@example.com', true, true],
      ['new@example.com', false, false],
    ]);
  });

  it('sends a link again without reauthentication, and says how long to wait when the limit holds it back', async () => {
    await setUp();
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: false, primary: false });
    expect(await resendEmailConfirmation(latchkey.deps, { user: ada, client, email: 'second@example.com' })).toMatchObject({ address: { email: 'second@example.com' } });
    expect(latchkey.mailer.lastTo('second@example.com')?.text).toContain('/accounts/confirm-email/');
    latchkey.clock.advance(60 * 1000);
    const refused = await resendEmailConfirmation(latchkey.deps, { user: ada, client, email: 'second@example.com' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ code: 'rate_limited', message: WAIT_BEFORE_RESENDING.id });
    // The default confirm_email limit is one mail per address per 3 minutes; Retry-After says
    // when the next one goes, and it does.
    const retryAfter = (refused as RateLimitedError).retryAfterSeconds;
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(180);
    latchkey.clock.advance(retryAfter * 1000);
    await resendEmailConfirmation(latchkey.deps, { user: ada, client, email: 'second@example.com' });
    expect(latchkey.mailer.outbox.filter((mail) => mail.to.includes('second@example.com'))).toHaveLength(2);
  });

  it("resends a waiting login's link to the unverified primary address, and to nobody once one is verified", async () => {
    await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: false });
    expect(await resendLoginVerification(latchkey.deps, { userId: bob.id, client })).toMatchObject({ address: { email: 'bob@example.com' } });
    expect(latchkey.mailer.lastTo('bob@example.com')?.text).toContain('/accounts/confirm-email/');
    await expect(resendLoginVerification(latchkey.deps, { userId: bob.id, client })).rejects.toBeInstanceOf(RateLimitedError);
    latchkey.mailer.clear();
    expect(await resendLoginVerification(latchkey.deps, { userId: ada.id, client })).toBeUndefined();
    expect(latchkey.mailer.outbox).toEqual([]);
  });
});
