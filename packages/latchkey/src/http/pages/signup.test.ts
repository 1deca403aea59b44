import { afterEach, describe, expect, it } from 'vitest';
import type { SettingValues } from '../../config/settings.js';
import { createUser } from '../../account/users.js';
import type { UsernameType } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('signup page on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}, usernameType: UsernameType = 'username') {
    latchkey = await createTestLatchkey({ kind, usernameType, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ...settings } });
    browser = await PageClient.create(latchkey);
  }

  const form = (overrides: Record<string, string> = {}) => ({ email: 'ada@example.com', username: 'ada', password1: PASSWORD, password2: PASSWORD, ...overrides });
  const events = async (userId: number) => (await latchkey.deps.store.auditLog.listForUser(userId)).map((record) => record.event);
  const sessionUser = async () => (await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId ?? null;

  it('shows allauth field names: with a username, or without one when users sign in by email', async () => {
    await setUp();
    const page = await browser.get('/accounts/signup/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    for (const name of ['csrfmiddlewaretoken', 'email', 'username', 'password1', 'password2']) expect(page.body).toContain(`name="${name}"`);
    await browser.close();
    await latchkey.destroy();
    await setUp({}, 'email');
    const byEmail = await browser.get('/accounts/signup/');
    expect(byEmail.body).toContain('name="email"');
    expect(byEmail.body).not.toContain('name="username"');
  });

  it('mandatory: creates an unverified account, mails the link, signs nobody in, and says so', async () => {
    await setUp();
    const response = await browser.post('/accounts/signup/', form());
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/accounts/confirm-email/');
    const user = (await latchkey.deps.store.users.findByUsername('ada'))!;
    expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ email: 'ada@example.com', verified: false, primary: true }]);
    expect(await sessionUser()).toBeNull();
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(latchkey.mailer.outbox[0]!.text).toContain('http://testserver/accounts/confirm-email/');
    expect(await events(user.id)).toEqual(expect.arrayContaining(['user_signed_up', 'email_confirmation_sent']));
    const sent = await browser.get('/accounts/confirm-email/');
    expect(sent.body).toContain('We have sent an email to ada@example.com for verification.');
  });

  it('optional: signs in at once, with a reminder to verify', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional' });
    const response = await browser.post('/accounts/signup/', form({ next: '/accounts/email/' }));
    expect(response.headers.location).toBe('/accounts/email/');
    const user = (await latchkey.deps.store.users.findByUsername('ada'))!;
    expect(await sessionUser()).toBe(user.id);
    expect(latchkey.mailer.outbox).toHaveLength(1);
    expect(await events(user.id)).toEqual(expect.arrayContaining(['user_signed_up', 'user_logged_in']));
    const next = await browser.get('/accounts/email/');
    expect(next.body).toContain('We have sent an email to ada@example.com for verification.');
  });

  it('none: signs in at once and sends no mail', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'none' }, 'email');
    const response = await browser.post('/accounts/signup/', form({ username: '' }));
    expect(response.headers.location).toBe('/');
    expect(await sessionUser()).toBe((await latchkey.deps.store.users.findByEmail('ada@example.com'))!.id);
    expect(latchkey.mailer.outbox).toHaveLength(0);
  });

  it.each([
    [{ password2: 'another long passphrase' }, 'password2', 'You must type the same password each time.'],
    [{ password1: 'password', password2: 'password' }, 'password1', 'This password is too common.'],
    [{ password1: 'short', password2: 'short' }, 'password1', 'This password is too short.'],
    [{ password1: '', password2: '' }, 'password1', 'This field is required.'],
    [{ email: '' }, 'email', 'This field is required.'],
    [{ email: 'not an address' }, 'email', 'Enter a valid email address.'],
    [{ email: 'a@example.com,b@example.com' }, 'email', 'Enter a valid email address.'],
    [{ username: 'ada lovelace' }, 'username', 'Enter a valid username.'],
    [{ username: '' }, 'username', 'This field is required.'],
  ])('refuses %o with an error under %s and stores nothing', async (overrides, field, message) => {
    await setUp();
    const response = await browser.post('/accounts/signup/', form(overrides));
    expect(response.statusCode).toBe(400);
    expect(response.body).toMatch(new RegExp(`id="${field}-errors"><li>${message.replace(/[.]/g, '\\.')}`));
    expect(await latchkey.deps.store.users.count()).toBe(0);
    expect(latchkey.mailer.outbox).toHaveLength(0);
  });

  it('refuses a taken username, in any case or width, with a clear error', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'admin', email: 'root@example.com', password: PASSWORD, emailVerified: true });
    for (const username of ['admin', 'ADMIN', 'ＡＤＭＩＮ']) {
      const response = await browser.post('/accounts/signup/', form({ username, email: 'new@example.com' }));
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('A user with that username already exists.');
    }
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('without mandatory verification, says plainly that an address is taken', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional' });
    await createUser(latchkey.deps, { username: 'first', email: 'ada@example.com', password: PASSWORD, emailVerified: false });
    const response = await browser.post('/accounts/signup/', form({ email: 'ADA@Example.COM' }));
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('A user is already registered with this email address.');
    expect(await latchkey.deps.store.users.count()).toBe(1);
    expect(await sessionUser()).toBeNull();
  });

  it('when signup is closed: says so, hides the link, and creates nothing', async () => {
    await setUp({ ACCOUNT_ALLOW_REGISTRATION: false });
    const page = await browser.get('/accounts/signup/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('We are sorry, but the sign up is currently closed.');
    expect(page.body).not.toContain('name="password1"');
    expect((await browser.get('/accounts/login/')).body).not.toContain('href="/accounts/signup/');
    const response = await browser.post('/accounts/signup/', form());
    expect(response.statusCode).toBe(403);
    expect(response.body).toContain('sign up is currently closed');
    expect(await latchkey.deps.store.users.count()).toBe(0);
    expect(latchkey.mailer.outbox).toHaveLength(0);
  });

  it('asks the adapter whether signup is open', async () => {
    await setUp();
    latchkey.deps.adapter.isOpenForSignup = () => Promise.resolve(false);
    expect((await browser.post('/accounts/signup/', form())).statusCode).toBe(403);
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('limits signups per IP and answers 429 with Retry-After', async () => {
    await setUp({ ACCOUNT_RATE_LIMITS: { signup: '2/m/ip' } });
    expect((await browser.post('/accounts/signup/', form({ username: 'one', email: 'one@example.com' }))).statusCode).toBe(302);
    expect((await browser.post('/accounts/signup/', form({ username: 'two', email: 'two@example.com' }))).statusCode).toBe(302);
    const refused = await browser.post('/accounts/signup/', form({ username: 'three', email: 'three@example.com' }));
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many attempts');
    expect(await latchkey.deps.store.users.count()).toBe(2);
  });

  it('sends a signed-in user on instead of showing the form', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional' });
    await browser.post('/accounts/signup/', form());
    expect((await browser.get('/accounts/signup/')).headers.location).toBe('/');
    expect((await browser.post('/accounts/signup/', form({ username: 'other', email: 'other@example.com' }))).statusCode).toBe(302);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });
});
