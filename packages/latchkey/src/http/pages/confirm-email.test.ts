import { afterEach, describe, expect, it } from 'vitest';
import { confirmEmail, makeConfirmationKey } from '../../account/email-confirmation.js';
import { createUser } from '../../account/users.js';
import { signValue } from '../../core/signing.js';
import type { EmailAddress, User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const DAY = 86400 * 1000;
const INVALID = 'This email confirmation link is invalid or has expired.';

describe.each(testDatabaseKinds())('confirm-email pages on %s: a GET changes nothing, a link works once and expires', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  let address: EmailAddress;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp() {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: false });
    address = (await latchkey.deps.store.emailAddresses.findForUser(ada.id, 'ada@example.com'))!;
  }
  const link = (key: string) => `/accounts/confirm-email/${encodeURIComponent(key)}/`;
  const verified = async () => (await latchkey.deps.store.emailAddresses.findById(address.id))?.verified;

  it('GET /accounts/confirm-email/ is the "verification sent" page', async () => {
    await setUp();
    const page = await browser.get('/accounts/confirm-email/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('We have sent an email to verify your address.');
  });

  it('GET shows the address and a button, and changes nothing', async () => {
    await setUp();
    const key = makeConfirmationKey(latchkey.deps, address);
    const page = await browser.get(link(key));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<strong>ada@example.com</strong>');
    expect(page.body).toContain(`action="${link(key)}"`);
    expect(page.body).toContain('name="csrfmiddlewaretoken"');
    expect(await verified()).toBe(false);
    expect(await latchkey.deps.store.auditLog.listForUser(ada.id)).toHaveLength(0);
  });

  it('POST confirms, records email_confirmed, and sends a signed-out person to sign in', async () => {
    await setUp();
    const response = await browser.post(link(makeConfirmationKey(latchkey.deps, address)), {});
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/accounts/login/');
    expect(await verified()).toBe(true);
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id)).map((record) => record.event)).toContain('email_confirmed');
    expect((await browser.get('/accounts/login/')).body).toContain('You have confirmed ada@example.com.');
    // Confirming signs nobody in, but now the password does.
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe('/');
  });

  it('sends a signed-in person back to the email page', async () => {
    await setUp();
    await latchkey.deps.store.emailAddresses.markVerified(address.id);
    const other = await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: false, primary: false });
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const response = await browser.post(link(makeConfirmationKey(latchkey.deps, other)), {});
    expect(response.headers.location).toBe('/accounts/email/');
  });

  it('a POST without a CSRF token, or with another browser\'s, is refused and confirms nothing', async () => {
    await setUp();
    const key = makeConfirmationKey(latchkey.deps, address);
    expect((await browser.post(link(key), {}, { csrf: false })).statusCode).toBe(403);
    const other = browser.another();
    await other.get('/accounts/login/');
    await browser.get('/accounts/login/');
    expect((await browser.post(link(key), { csrfmiddlewaretoken: other.cookies.get('csrftoken')! }, { csrf: false })).statusCode).toBe(403);
    expect(await verified()).toBe(false);
  });

  it('a link works once', async () => {
    await setUp();
    const key = makeConfirmationKey(latchkey.deps, address);
    expect((await browser.post(link(key), {})).statusCode).toBe(302);
    for (const response of [await browser.get(link(key)), await browser.post(link(key), {})]) {
      expect(response.statusCode).toBe(404);
      expect(response.body).toContain(INVALID);
    }
  });

  it('a link works until ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS (3) and not a second longer', async () => {
    await setUp();
    const key = makeConfirmationKey(latchkey.deps, address);
    latchkey.clock.advance(3 * DAY);
    expect((await browser.get(link(key))).statusCode).toBe(200);
    latchkey.clock.advance(1000);
    expect((await browser.get(link(key))).statusCode).toBe(404);
    expect((await browser.post(link(key), {})).statusCode).toBe(404);
    expect(await verified()).toBe(false);
  });

  it('a link confirms only the address it was made for, and dies with that address', async () => {
    await setUp();
    const second = await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: false, primary: false });
    const secondKey = makeConfirmationKey(latchkey.deps, second);
    expect((await browser.post(link(makeConfirmationKey(latchkey.deps, address)), {})).statusCode).toBe(302);
    expect((await latchkey.deps.store.emailAddresses.findById(second.id))?.verified).toBe(false);
    // Removed and added again, the address is a new row: the old link does not carry over.
    await latchkey.deps.store.emailAddresses.remove(second.id);
    const again = await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: false, primary: false });
    expect((await browser.post(link(secondKey), {})).statusCode).toBe(404);
    expect((await latchkey.deps.store.emailAddresses.findById(again.id))?.verified).toBe(false);
  });

  it('forged, foreign, blank and malformed keys get the invalid page, never a 500', async () => {
    await setUp();
    const real = makeConfirmationKey(latchkey.deps, address);
    const [value, time, signature] = real.split('.') as [string, string, string];
    const otherValue = Buffer.from(`${address.id}:someone@example.com`).toString('base64url');
    const keys = [
      `${otherValue}.${time}.${signature}`,
      `${value}.${(parseInt(time, 36) + 1).toString(36)}.${signature}`,
      signValue(latchkey.settings.SECRET_KEY, 'password-reset', `${address.id}:ada@example.com`, latchkey.clock.now()),
      ' ',
      'null',
      'undefined',
      '[]',
      '%00',
      "' OR 1=1 --",
      'x'.repeat(90),
    ];
    for (const key of keys) {
      const response = await browser.get(link(key));
      expect(response.statusCode, key.slice(0, 40)).toBe(404);
      expect((await browser.post(link(key), {})).statusCode).toBe(404);
    }
    expect((await browser.get('/accounts/confirm-email/%2F/')).statusCode).toBe(404);
    // Fastify refuses a path parameter over its length limit before any route runs.
    expect((await browser.get(link('x'.repeat(5000)))).statusCode).toBe(414);
    for (const key of [null, undefined, '', [real], { key: real }, 42]) {
      await expect(confirmEmail(latchkey.deps, key, { ip: '127.0.0.1', userAgent: '' })).rejects.toMatchObject({ code: 'invalid_key' });
    }
    expect(await verified()).toBe(false);
  });
});
