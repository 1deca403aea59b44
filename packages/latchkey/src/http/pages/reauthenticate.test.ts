import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { mainOf, PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('reauthentication page on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...settings });
    browser = await PageClient.create(latchkey);
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    // Long enough after the login that it no longer counts as recent.
    latchkey.clock.advance(10 * 60 * 1000);
  }

  const authenticatedAt = async () => (await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.data._authenticated_at;

  it('asks for the password, records the proof, and returns to next', async () => {
    await setUp();
    const form = await browser.get('/accounts/reauthenticate/?next=/accounts/email/');
    expect(form.statusCode).toBe(200);
    for (const name of ['csrfmiddlewaretoken', 'password']) expect(form.body).toContain(`name="${name}"`);
    expect(form.body).toContain('name="next" value="/accounts/email/"');
    const done = await browser.post('/accounts/reauthenticate/', { password: PASSWORD, next: '/accounts/email/' });
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe('/accounts/email/');
    expect(await authenticatedAt()).toBe(latchkey.clock.now().toISOString());
  });

  it('refuses a wrong or empty password with one generic message and records nothing', async () => {
    await setUp();
    const before = await authenticatedAt();
    for (const password of ['wrong password', '']) {
      const refused = await browser.post('/accounts/reauthenticate/', { password, next: '/accounts/email/' });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('Incorrect password.');
      expect(refused.body).toContain('name="next" value="/accounts/email/"');
    }
    expect(await authenticatedAt()).toBe(before);
  });

  it('follows only same-site relative paths', async () => {
    await setUp();
    for (const next of ['//evil.com', 'https://evil.com', '/\\evil.com', 'javascript:alert(1)']) {
      expect((await browser.post('/accounts/reauthenticate/', { password: PASSWORD, next })).headers.location, next).toBe('/');
      expect(mainOf((await browser.get(`/accounts/reauthenticate/?next=${encodeURIComponent(next)}`)).body)).not.toContain('name="next"');
    }
  });

  it('is for signed-in users only, limited per user, and refuses a POST without a CSRF token', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { reauthenticate: '2/m/user' } } });
    const anonymous = await browser.another().get('/accounts/reauthenticate/?next=/x/');
    expect(anonymous.headers.location).toBe('/accounts/login/?next=%2Faccounts%2Freauthenticate%2F%3Fnext%3D%2Fx%2F');
    const before = await authenticatedAt();
    expect((await browser.post('/accounts/reauthenticate/', { password: PASSWORD }, { csrf: false })).statusCode).toBe(403);
    expect(await authenticatedAt()).toBe(before);
    for (let i = 0; i < 2; i++) await browser.post('/accounts/reauthenticate/', { password: 'wrong' });
    const limited = await browser.post('/accounts/reauthenticate/', { password: PASSWORD });
    expect(limited.statusCode).toBe(429);
    expect(await authenticatedAt()).toBe(before);
  });
});
