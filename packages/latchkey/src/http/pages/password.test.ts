import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';

/** The path of the reset link in the latest mail, as a person would click it. */
function resetLinkPath(latchkey: TestLatchkey): string {
  const text = latchkey.mailer.outbox.at(-1)?.text ?? '';
  const link = /http:\/\/testserver(\/accounts\/password\/reset\/key\/[^\s/]+\/)/.exec(text);
  if (!link) throw new Error(`No reset link in: ${text}`);
  return link[1]!;
}

describe.each(testDatabaseKinds())('password pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...settings });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  const login = (client: PageClient, password = PASSWORD) => client.post('/accounts/login/', { login: 'ada', password });

  it('reset: request, mail, link, new password, done; the new password signs in and the old does not', async () => {
    await setUp();
    const form = await browser.get('/accounts/password/reset/');
    expect(form.statusCode).toBe(200);
    for (const name of ['csrfmiddlewaretoken', 'email']) expect(form.body).toContain(`name="${name}"`);
    const requested = await browser.post('/accounts/password/reset/', { email: 'ada@example.com' });
    expect(requested.statusCode).toBe(302);
    expect(requested.headers.location).toBe('/accounts/password/reset/done/');
    expect((await browser.get('/accounts/password/reset/done/')).body).toContain('we have sent it a link');

    const link = await browser.get(resetLinkPath(latchkey));
    expect(link.statusCode).toBe(302);
    const formPath = link.headers.location as string;
    expect(formPath).toBe(`/accounts/password/reset/key/${ada.id.toString(36)}-set-password/`);
    const keyForm = await browser.get(formPath);
    expect(keyForm.statusCode).toBe(200);
    for (const name of ['csrfmiddlewaretoken', 'password1', 'password2']) expect(keyForm.body).toContain(`name="${name}"`);
    expect(keyForm.body).toContain(`action="${formPath}"`);

    const mismatch = await browser.post(formPath, { password1: NEW_PASSWORD, password2: 'not the same' });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.body).toContain('You must type the same password each time.');
    const common = await browser.post(formPath, { password1: 'password', password2: 'password' });
    expect(common.body).toContain('This password is too common.');
    const done = await browser.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe('/accounts/password/reset/key/done/');
    expect((await browser.get('/accounts/password/reset/key/done/')).body).toContain('Your password is now changed');

    expect((await login(browser.another())).statusCode).toBe(400);
    expect((await login(browser.another(), NEW_PASSWORD)).statusCode).toBe(302);
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id)).map((record) => record.event)).toContain('password_reset');
  });

  it('reset: an unknown or used link shows the invalid-link page, and its form refuses', async () => {
    await setUp();
    const garbage = await browser.get('/accounts/password/reset/key/1-abc-notakey/');
    expect(garbage.statusCode).toBe(200);
    expect(garbage.body).toContain('request a new password reset');
    expect(garbage.body).not.toContain('name="password1"');
    const noKey = await browser.post(`/accounts/password/reset/key/${ada.id.toString(36)}-set-password/`, { password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(noKey.statusCode).toBe(400);
    expect(noKey.body).toContain('request a new password reset');
    expect((await latchkey.deps.store.users.findById(ada.id))!.password).toBe(ada.password);
  });

  it('reset: an invalid address is a form error; too many requests for one address get 429', async () => {
    await setUp();
    const invalid = await browser.post('/accounts/password/reset/', { email: 'not an address' });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.body).toContain('Enter a valid email address.');
    for (let i = 0; i < 5; i++) expect((await browser.post('/accounts/password/reset/', { email: 'ADA@example.com' })).statusCode).toBe(302);
    const refused = await browser.post('/accounts/password/reset/', { email: 'ada@example.com' });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many attempts');
    expect(latchkey.mailer.outbox).toHaveLength(5);
  });

  it('reset from key: limited per IP', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { reset_password_from_key: '2/m/ip' } } });
    await browser.post('/accounts/password/reset/', { email: 'ada@example.com' });
    const formPath = (await browser.get(resetLinkPath(latchkey))).headers.location as string;
    for (let i = 0; i < 2; i++) await browser.post(formPath, { password1: 'password', password2: 'password' });
    const refused = await browser.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(refused.statusCode).toBe(429);
    expect((await latchkey.deps.store.users.findById(ada.id))!.password).toBe(ada.password);
  });

  it('change: signed in only; the old password is required; success keeps this browser signed in', async () => {
    await setUp();
    const anonymous = await browser.get('/accounts/password/change/');
    expect(anonymous.headers.location).toBe('/accounts/login/?next=%2Faccounts%2Fpassword%2Fchange%2F');
    await login(browser);
    const form = await browser.get('/accounts/password/change/');
    for (const name of ['csrfmiddlewaretoken', 'oldpassword', 'password1', 'password2']) expect(form.body).toContain(`name="${name}"`);
    const wrong = await browser.post('/accounts/password/change/', { oldpassword: 'wrong', password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('Please type your current password.');
    const changed = await browser.post('/accounts/password/change/', { oldpassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(changed.statusCode).toBe(302);
    expect(changed.headers.location).toBe('/accounts/password/change/');
    const after = await browser.get('/accounts/password/change/');
    expect(after.statusCode).toBe(200);
    expect(after.body).toContain('Password successfully changed.');
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toEqual(['[Test Site] Your password has been changed']);
    expect((await login(browser.another(), NEW_PASSWORD)).statusCode).toBe(302);
  });

  it('change: limited per user', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { change_password: '2/m/user' } } });
    await login(browser);
    for (let i = 0; i < 2; i++) await browser.post('/accounts/password/change/', { oldpassword: 'wrong', password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    const refused = await browser.post('/accounts/password/change/', { oldpassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(refused.statusCode).toBe(429);
  });

  it('set: an account without a password is sent from change to set, sets one, and is then sent back', async () => {
    await setUp();
    const social = await createUser(latchkey.deps, { username: 'social', email: 'social@example.com', password: null, emailVerified: true });
    await browser.get('/accounts/login/');
    // No password to sign in with: log the browser in the way a social login would.
    const session = await latchkey.deps.sessions.create({ userId: social.id, data: { _authenticated_at: latchkey.clock.now().toISOString() } });
    browser.cookies.set('sessionid', session.id);
    expect((await browser.get('/accounts/password/change/')).headers.location).toBe('/accounts/password/set/');
    expect((await browser.post('/accounts/password/change/', { oldpassword: '', password1: NEW_PASSWORD, password2: NEW_PASSWORD })).headers.location).toBe(
      '/accounts/password/set/',
    );
    const form = await browser.get('/accounts/password/set/');
    for (const name of ['password1', 'password2']) expect(form.body).toContain(`name="${name}"`);
    expect(form.body).not.toContain('name="oldpassword"');
    const set = await browser.post('/accounts/password/set/', { password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(set.headers.location).toBe('/accounts/password/change/');
    expect(browser.cookies.get('sessionid')).not.toBe(session.id);
    expect((await browser.get('/accounts/password/set/')).headers.location).toBe('/accounts/password/change/');
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toEqual(['[Test Site] A password has been set on your account']);
    expect((await latchkey.deps.store.auditLog.listForUser(social.id)).map((record) => record.event)).toContain('password_set');
  });
});
