/**
 * Attacks on signup: enumeration by an address already registered, CSRF, hostile input,
 * identifiers that collide after folding, parallel signups, and a mail server that fails.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { createMailer } from '../../mail/index.js';
import type { UsernameType } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { startTestSmtpServer } from '../../testing/smtp.js';

const PASSWORD = 'a long enough passphrase';

/** A response with what legitimately differs between two requests (CSRF tokens, cookie values) blanked. */
function shape(response: LightMyRequestResponse, email: string) {
  return {
    status: response.statusCode,
    location: response.headers.location,
    cookies: response.cookies.map((cookie) => cookie.name).sort(),
    headers: Object.keys(response.headers).filter((name) => name !== 'date' && name !== 'content-length').sort(),
    body: response.body.replaceAll(email, 'EMAIL').replace(/value="[A-Za-z0-9]{64}"/g, 'value="TOKEN"'),
  };
}

describe.each(testDatabaseKinds())('signup under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}, usernameType: UsernameType = 'username') {
    latchkey = await createTestLatchkey({ kind, usernameType, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ...settings } });
    browser = await PageClient.create(latchkey);
  }
  const form = (overrides: Record<string, string> = {}) => ({ email: 'ada@example.com', username: 'ada', password1: PASSWORD, password2: PASSWORD, ...overrides });

  it('an address that has an account gets the response a new one gets; the owner is told; no second account', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'owner', email: 'taken@example.com', password: PASSWORD, emailVerified: true });
    const fresh = browser.another();
    const newSignup = await fresh.post('/accounts/signup/', form({ username: 'newcomer', email: 'free@example.com' }));
    const newPage = await fresh.get(newSignup.headers.location as string);
    // Fullwidth letters and upper case fold to the stored address, so they cannot make a second account for it.
    const takenSignup = await browser.post('/accounts/signup/', form({ username: 'intruder', email: 'ＴＡＫＥＮ@Example.com' }));
    const takenPage = await browser.get(takenSignup.headers.location as string);
    expect(shape(takenSignup, 'taken@example.com')).toEqual(shape(newSignup, 'free@example.com'));
    expect(shape(takenPage, 'taken@example.com')).toEqual(shape(newPage, 'free@example.com'));

    expect(await latchkey.deps.store.users.findByUsername('intruder')).toBeUndefined();
    expect(await latchkey.deps.store.emailAddresses.listByEmail('taken@example.com')).toHaveLength(1);
    const notice = latchkey.mailer.lastTo('taken@example.com')!;
    expect(notice.subject).toBe('[Test Site] Account already exists');
    expect(notice.text).toContain('http://testserver/accounts/password/reset/');
    expect(notice.text).not.toContain('confirm-email');
  });

  it('the notice to an owner is rate limited like a confirmation, so the form cannot flood an inbox', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'owner', email: 'taken@example.com', password: PASSWORD, emailVerified: true });
    for (const username of ['one', 'two', 'three']) {
      expect((await browser.post('/accounts/signup/', form({ username, email: 'taken@example.com' }))).statusCode).toBe(302);
    }
    expect(latchkey.mailer.outbox).toHaveLength(1);
  });

  it('a signup without a CSRF token, or with another browser\'s, is refused and creates nothing', async () => {
    await setUp();
    expect((await browser.post('/accounts/signup/', form(), { csrf: false })).statusCode).toBe(403);
    const other = browser.another();
    await other.get('/accounts/signup/');
    await browser.get('/accounts/signup/');
    const foreign = await browser.post('/accounts/signup/', { ...form(), csrfmiddlewaretoken: other.cookies.get('csrftoken')! }, { csrf: false });
    expect(foreign.statusCode).toBe(403);
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('a 1 MB password is refused at once and never hashed; nor is one over PASSWORD_MAX_BYTES', async () => {
    await setUp();
    const before = latchkey.deps.passwords.stats().completed;
    const huge = 'x'.repeat(1024 * 1024);
    expect((await browser.post('/accounts/signup/', form({ password1: huge, password2: huge }))).statusCode).toBe(413);
    const long = 'é'.repeat(2100);
    const refused = await browser.post('/accounts/signup/', form({ password1: long, password2: long }));
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('This password is too long');
    expect(latchkey.deps.passwords.stats().completed).toBe(before);
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('passwords of 64+ characters work', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional' });
    const long = 'correct horse battery staple '.repeat(4);
    expect((await browser.post('/accounts/signup/', form({ password1: long, password2: long }))).statusCode).toBe(302);
    expect(await latchkey.deps.passwords.verify(long, (await latchkey.deps.store.users.findByUsername('ada'))!.password)).toMatchObject({ valid: true });
  });

  it('markup is escaped, extra fields are ignored, and repeated or odd fields fail validation', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional' });
    const script = await browser.post('/accounts/signup/', form({ username: '<script>alert(1)</script>', email: '"><script>alert(2)</script>' }));
    expect(script.statusCode).toBe(400);
    expect(script.body).not.toContain('<script>alert');
    expect(script.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');

    const hostile: Array<Record<string, string>> = [{ username: 'ada\u0000' }, { email: 'ada\u0000@example.com' }, { email: "ada@example.com'; SELECT pg_sleep(5); --" }];
    for (const fields of hostile) {
      expect((await browser.post('/accounts/signup/', form(fields))).statusCode).toBe(400);
    }

    const repeated = await browser.app.inject({
      method: 'POST',
      url: '/accounts/signup/',
      headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' },
      cookies: Object.fromEntries(browser.cookies),
      payload: `csrfmiddlewaretoken=${browser.cookies.get('csrftoken')}&username=ada&email=a@example.com&email=b@example.com&password1=${encodeURIComponent(PASSWORD)}&password2=${encodeURIComponent(PASSWORD)}`,
    });
    expect(repeated.statusCode).toBe(400);
    expect(await latchkey.deps.store.users.count()).toBe(0);

    const extra = await browser.post('/accounts/signup/', { ...form(), is_staff: 'on', is_superuser: 'true', email_verified: 'true', verified: '1', is_active: 'false' });
    expect(extra.statusCode).toBe(302);
    const user = (await latchkey.deps.store.users.findByUsername('ada'))!;
    expect(user).toMatchObject({ isStaff: false, isSuperuser: false, isActive: true });
    expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ verified: false }]);
  });

  it('the Kelvin sign and fullwidth letters name the same username', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'kate', email: 'kate@example.com', password: PASSWORD, emailVerified: true });
    for (const username of ['\u212Aate', 'ｋａｔｅ', 'KATE']) {
      expect((await browser.post('/accounts/signup/', form({ username, email: 'other@example.com' }))).body).toContain('A user with that username already exists.');
    }
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it.each(['username', 'email'] as const)('20 parallel signups with one address in different cases make exactly one account (%s project)', async (usernameType) => {
    await setUp({}, usernameType);
    await browser.get('/accounts/signup/');
    const spellings = ['ada@example.com', 'ADA@example.com', 'Ada@Example.com', 'ada@EXAMPLE.COM', 'aDa@example.Com'];
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        browser.another().app.inject({
          method: 'POST',
          url: '/accounts/signup/',
          headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' },
          cookies: { csrftoken: browser.cookies.get('csrftoken')! },
          payload: new URLSearchParams({
            csrfmiddlewaretoken: browser.cookies.get('csrftoken')!,
            ...form({ email: spellings[index % spellings.length]!, username: `user${index}` }),
            ...(usernameType === 'email' ? { username: '' } : {}),
          }).toString(),
        }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(302));
    expect(await latchkey.deps.store.users.count()).toBe(1);
    expect(await latchkey.deps.store.emailAddresses.listByEmail('ada@example.com')).toHaveLength(1);
  });

  it('when the mail server refuses, the account is kept, the person is told, and signing in sends the mail again', async () => {
    await setUp();
    const smtp = await startTestSmtpServer({ failWith: 550 });
    const failing = createMailer({ url: smtp.url, defaultFrom: 'webmaster@testserver' });
    const memory = latchkey.deps.mailer;
    latchkey.deps.mailer = failing;
    cleanups.push(() => failing.close(), () => smtp.close());
    await createUser(latchkey.deps, { username: 'owner', email: 'taken@example.com', password: PASSWORD, emailVerified: true });

    const fresh = browser.another();
    const newSignup = await fresh.post('/accounts/signup/', form());
    const newPage = await fresh.get('/accounts/confirm-email/');
    expect(newPage.body).toContain('We could not send an email to ada@example.com just now.');
    expect((await latchkey.deps.store.users.findByUsername('ada'))?.isActive).toBe(true);
    // The same words when the address already had an account: the failure reveals nothing either.
    const takenSignup = await browser.post('/accounts/signup/', form({ username: 'intruder', email: 'taken@example.com' }));
    const takenPage = await browser.get('/accounts/confirm-email/');
    expect(shape(takenSignup, 'taken@example.com')).toEqual(shape(newSignup, 'ada@example.com'));
    expect(shape(takenPage, 'taken@example.com')).toEqual(shape(newPage, 'ada@example.com'));

    latchkey.deps.mailer = memory;
    const login = await fresh.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(login.body).toContain('Verify your email address');
    expect(latchkey.mailer.lastTo('ada@example.com')?.text).toContain('/accounts/confirm-email/');
  });
});
