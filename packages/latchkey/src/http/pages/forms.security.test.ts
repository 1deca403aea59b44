/**
 * Attacks every account form must resist at once: CSRF (cookie-authenticated posts as text/plain
 * or form data from a foreign Origin or a cross-site fetch are refused), open redirect (no `next`
 * leaves the site, by GET or POST, on any page that takes one) and SQL injection (payloads in every
 * field fail normally, with no 500 and no change), on every database.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

/** Every state-changing form and the fields it reads. */
const FORMS: [string, string[]][] = [
  ['/accounts/login/', ['login', 'password', 'remember', 'next']],
  ['/accounts/signup/', ['email', 'username', 'password1', 'password2']],
  ['/accounts/logout/', []],
  ['/accounts/password/reset/', ['email']],
  ['/accounts/password/change/', ['oldpassword', 'password1', 'password2']],
  ['/accounts/password/set/', ['password1', 'password2']],
  ['/accounts/reauthenticate/', ['password', 'next']],
  ['/accounts/email/', ['email', 'action_add']],
  ['/accounts/sessions/', []],
  ['/accounts/confirm-email/x/', []],
];

const SQL_PAYLOADS = ["' OR '1'='1", "x'; DROP TABLE latchkey_users; --", "1; SELECT pg_sleep(10); --", "\\' UNION SELECT password FROM latchkey_users --"];

describe.each(testDatabaseKinds())('every account form on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;

  beforeEach(async () => {
    latchkey = await createTestLatchkey({ kind });
    browser = await PageClient.create(latchkey);
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
  });

  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function state() {
    const users = await latchkey.deps.store.users.count();
    const user = await latchkey.deps.store.users.findByUsername('ada');
    const addresses = await latchkey.deps.store.emailAddresses.listForUser(user!.id);
    return { users, password: user!.password, addresses: addresses.length, mails: latchkey.mailer.outbox.length };
  }

  it('refuses cross-site posts carrying the session cookie, whatever the content type', async () => {
    const before = await state();
    for (const [path] of FORMS) {
      const crossSite: Record<string, string>[] = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }];
      for (const headers of crossSite) {
        const response = await browser.post(path, {}, { headers });
        expect(response.statusCode, `${path} ${JSON.stringify(headers)}`).toBe(403);
      }
      const plain = await browser.app.inject({
        method: 'POST',
        url: path,
        payload: 'login=ada&password=x',
        headers: { host: 'testserver', 'content-type': 'text/plain', origin: 'https://evil.example' },
        cookies: Object.fromEntries(browser.cookies),
      });
      expect([403, 415], `${path} text/plain`).toContain(plain.statusCode);
    }
    expect(await state()).toEqual(before);
    expect(await latchkey.deps.sessions.load(browser.cookies.get('sessionid'))).toBeDefined();
  });

  it('SQL payloads in every field fail normally: no 500, nothing changed', async () => {
    const before = await state();
    for (const [path, fields] of FORMS) {
      for (const payload of SQL_PAYLOADS) {
        const values = Object.fromEntries(fields.map((field) => [field, payload]));
        const response = await browser.post(path, values);
        expect(response.statusCode, `${path} ${payload}`).toBeLessThan(500);
      }
    }
    const after = await state();
    expect(after.users).toBe(before.users);
    expect(after.password).toBe(before.password);
    expect(after.addresses).toBe(before.addresses);
  });

  it('no page follows a next that leaves the site', async () => {
    const attacks = ['//evil.com', '///evil.com', '/\\evil.com', 'https://evil.com', 'javascript:alert(1)', 'https://app@evil.com', '%2F%2Fevil.com', '/\t/evil.com'];
    for (const next of attacks) {
      for (const path of ['/accounts/login/', '/accounts/signup/', '/accounts/reauthenticate/']) {
        const page = await browser.get(`${path}?next=${encodeURIComponent(next)}`);
        expect(page.headers.location ?? '', `${path} ${next}`).not.toContain('evil.com');
        expect(page.body, `${path} ${next}`).not.toContain('evil.com');
      }
      const reauthenticated = await browser.post('/accounts/reauthenticate/', { password: PASSWORD, next });
      expect(reauthenticated.headers.location, next).not.toContain('evil.com');
    }
  });
});
