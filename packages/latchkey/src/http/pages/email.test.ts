import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { LatchkeyError } from '../../core/errors.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('email management page on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}) {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).statusCode).toBe(302);
  }
  const addresses = () => latchkey.deps.store.emailAddresses.listForUser(ada.id);
  const events = async () => (await latchkey.deps.store.auditLog.listForUser(ada.id)).map((record) => record.event);
  const add = (email: string) => browser.post('/accounts/email/', { email, action_add: '' });
  async function addVerified(email: string) {
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email, verified: true, primary: false });
  }

  it('sends a signed-out visitor to the login page, which returns here', async () => {
    await setUp();
    const response = await browser.another().get('/accounts/email/');
    expect(response.headers.location).toBe('/accounts/login/?next=%2Faccounts%2Femail%2F');
  });

  it('lists the addresses with their state and allauth\'s form names', async () => {
    await setUp();
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: false, primary: false });
    const page = await browser.get('/accounts/email/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toMatch(/ada@example\.com<\/label>\s*<\/td>\s*<td>\s*Verified, primary/);
    expect(page.body).toMatch(/second@example\.com<\/label>\s*<\/td>\s*<td>\s*Unverified/);
    for (const name of ['action_add', 'action_send', 'action_remove', 'action_primary']) expect(page.body).toContain(`name="${name}"`);
    expect(page.body).toContain('type="radio" name="email"');
  });

  it('adds an address, mails its link, and records email_added', async () => {
    await setUp();
    const response = await add('Second@Example.com');
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/accounts/email/');
    expect(await addresses()).toMatchObject([{ email: 'ada@example.com', primary: true }, { email: 'second@example.com', verified: false, primary: false }]);
    expect(latchkey.mailer.lastTo('second@example.com')?.text).toContain('/accounts/confirm-email/');
    expect(await events()).toEqual(expect.arrayContaining(['email_added', 'email_confirmation_sent']));
    expect((await browser.get('/accounts/email/')).body).toContain('Confirmation email sent to second@example.com.');
  });

  it.each([
    ['not an address', 'Enter a valid email address.'],
    ['', 'Enter a valid email address.'],
    ['ADA@example.com', 'This email address is already associated with this account.'],
    ['ada\u0000@example.com', 'Enter a valid email address.'],
  ])('refuses to add %j with a clear error', async (email, message) => {
    await setUp();
    const response = await add(email);
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain(message);
    expect(await addresses()).toHaveLength(1);
  });

  it('asks the adapter to clean an added address', async () => {
    await setUp();
    latchkey.deps.adapter.cleanEmail = (email) => {
      if (email.endsWith('@example.com')) return email;
      throw new LatchkeyError('invalid_email', 'Only example.com addresses, please.', { param: 'email' });
    };
    const refused = await add('ok@elsewhere.org');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Only example.com addresses, please.');
    expect((await add('ok@example.com')).statusCode).toBe(302);
    expect(await addresses()).toHaveLength(2);
  });

  it('refuses more than ACCOUNT_MAX_EMAIL_ADDRESSES addresses', async () => {
    await setUp({ ACCOUNT_MAX_EMAIL_ADDRESSES: 2 });
    expect((await add('second@example.com')).statusCode).toBe(302);
    const refused = await add('third@example.com');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('You cannot add more than 2 email addresses.');
    expect(await addresses()).toHaveLength(2);
    expect((await browser.get('/accounts/email/')).body).not.toContain('name="action_add"');
  });

  it('re-sends the confirmation of an unverified address, within the confirm_email limit', async () => {
    await setUp();
    await add('second@example.com');
    latchkey.mailer.clear();
    const early = await browser.post('/accounts/email/', { email: 'second@example.com', action_send: '' });
    expect(early.statusCode).toBe(429);
    expect(early.body).toContain('Please wait a few minutes');
    latchkey.clock.advance(3 * 60 * 1000);
    const later = await browser.post('/accounts/email/', { email: 'second@example.com', action_send: '' });
    expect(later.statusCode).toBe(302);
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['second@example.com']]);
    const verified = await browser.post('/accounts/email/', { email: 'ada@example.com', action_send: '' });
    expect(verified.statusCode).toBe(400);
    expect(verified.body).toContain('This email address is already verified.');
  });

  it('removes an address that is not the primary one, and tells the primary address', async () => {
    await setUp();
    await addVerified('second@example.com');
    const response = await browser.post('/accounts/email/', { email: 'second@example.com', action_remove: '' });
    expect(response.statusCode).toBe(302);
    expect((await addresses()).map((address) => address.email)).toEqual(['ada@example.com']);
    expect(await events()).toContain('email_removed');
    expect(latchkey.mailer.lastTo('ada@example.com')?.text).toContain('second@example.com was removed from your account');
  });

  it('refuses to remove the primary address', async () => {
    await setUp();
    await addVerified('second@example.com');
    const response = await browser.post('/accounts/email/', { email: 'ada@example.com', action_remove: '' });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('You cannot remove your primary email address.');
    expect(await addresses()).toHaveLength(2);
  });

  it('makes a verified address primary, records from and to, and tells the former address', async () => {
    await setUp();
    await addVerified('second@example.com');
    const response = await browser.post('/accounts/email/', { email: 'second@example.com', action_primary: '' });
    expect(response.statusCode).toBe(302);
    expect(await addresses()).toMatchObject([{ email: 'second@example.com', primary: true }, { email: 'ada@example.com', primary: false }]);
    expect((await latchkey.deps.store.users.findById(ada.id))?.email).toBe('second@example.com');
    const [changed] = await latchkey.deps.store.auditLog.listForUser(ada.id, 1);
    expect(changed).toMatchObject({ event: 'email_changed', data: { from_email: 'ada@example.com', to_email: 'second@example.com' } });
    expect(latchkey.mailer.lastTo('ada@example.com')?.subject).toBe('[Test Site] Your primary email address was changed');
  });

  it('refuses to make an unverified address primary', async () => {
    await setUp();
    await add('second@example.com');
    const response = await browser.post('/accounts/email/', { email: 'second@example.com', action_primary: '' });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('Your primary email address must be verified.');
    expect((await addresses())[0]?.email).toBe('ada@example.com');
  });

  it("acts only on the user's own addresses, and asks for an action", async () => {
    await setUp();
    const other = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.deps.store.emailAddresses.add({ userId: other.id, email: 'bob2@example.com', verified: true, primary: false });
    for (const action of ['action_remove', 'action_primary', 'action_send']) {
      const response = await browser.post('/accounts/email/', { email: 'bob2@example.com', [action]: '' });
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('Select one of your email addresses.');
    }
    expect(await latchkey.deps.store.emailAddresses.listForUser(other.id)).toHaveLength(2);
    expect((await browser.post('/accounts/email/', { email: 'x@example.com' })).statusCode).toBe(400);
  });

  it('sends a stale session to reauthenticate before any change, and changes nothing', async () => {
    await setUp();
    await addVerified('second@example.com');
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'pending@example.com', verified: false, primary: false });
    latchkey.clock.advance(6 * 60 * 1000);
    expect((await browser.get('/accounts/email/')).statusCode).toBe(200);
    const changes: Array<Record<string, string>> = [
      { email: 'new@example.com', action_add: '' },
      { email: 'second@example.com', action_remove: '' },
      { email: 'second@example.com', action_primary: '' },
    ];
    for (const fields of changes) {
      const response = await browser.post('/accounts/email/', fields);
      expect(response.statusCode).toBe(302);
      expect(response.headers.location).toBe('/accounts/reauthenticate/?next=%2Faccounts%2Femail%2F');
    }
    expect(await addresses()).toMatchObject([{ email: 'ada@example.com', primary: true }, { email: 'second@example.com' }, { email: 'pending@example.com' }]);
    // Sending a link again changes nothing about the account: no reauthentication for that.
    const resend = await browser.post('/accounts/email/', { email: 'pending@example.com', action_send: '' });
    expect(resend.statusCode).toBe(302);
    expect(resend.headers.location).toBe('/accounts/email/');
    expect(latchkey.mailer.lastTo('pending@example.com')?.text).toContain('/accounts/confirm-email/');
  });

  it('limits changes per user (manage_email) with a 429', async () => {
    await setUp({ ACCOUNT_RATE_LIMITS: { manage_email: '2/m/user' } });
    expect((await add('one@example.com')).statusCode).toBe(302);
    expect((await add('two@example.com')).statusCode).toBe(302);
    const refused = await add('three@example.com');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(await addresses()).toHaveLength(3);
  });
});
