/**
 * ACCOUNT_SIGNUP_FIELDS (docs/settings.md): what the signup asks, in its order, on the page and
 * through the headless API; and start-up's refusal of a list allauth or Latchkey cannot serve.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

/** The names of the signup form's inputs, in the page's order. */
function inputNames(html: string): string[] {
  const form = /<form method="post" action="\/accounts\/signup\/"[\s\S]*?<\/form>/.exec(html)?.[0] ?? '';
  return [...form.matchAll(/<input id="id_[^"]+" name="([^"]+)"/g)].map((match) => match[1]!);
}

describe.each(testDatabaseKinds())('ACCOUNT_SIGNUP_FIELDS on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient | undefined;
  afterEach(async () => {
    await browser?.close();
    await latchkey.destroy();
    browser = undefined;
  });

  async function setUp(settings: Partial<SettingValues>, usernameType: 'username' | 'email' = 'email') {
    latchkey = await createTestLatchkey({ kind, usernameType, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...settings } });
    browser = await PageClient.create(latchkey);
    return browser;
  }

  it('email*,name*,password1*: the page asks an address, a required name and one password, and refuses a signup without the name', async () => {
    const page = await setUp({ ACCOUNT_SIGNUP_FIELDS: ['email*', 'name*', 'password1*'] });
    const form = await page.get('/accounts/signup/');
    expect(inputNames(form.body)).toEqual(['email', 'name', 'password1']);
    expect(form.body).toMatch(/<label for="id_name">Name<\/label>\s*<input id="id_name" name="name" type="text" value="" autocomplete="name" required>/);

    const refused = await page.post('/accounts/signup/', { email: 'ada@example.com', name: '  ', password1: PASSWORD });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/id="name-errors"><li>This field is required\.<\/li>/);
    // What was typed stays, the password aside.
    expect(refused.body).toContain('value="ada@example.com"');
    expect(refused.body).not.toContain(PASSWORD);
    expect(await latchkey.users.findByEmail('ada@example.com')).toBeUndefined();

    const accepted = await page.post('/accounts/signup/', { email: 'ada@example.com', name: 'Ada Lovelace', password1: PASSWORD });
    expect(accepted.statusCode).toBe(302);
    expect(await latchkey.users.findByEmail('ada@example.com')).toMatchObject({ name: 'Ada Lovelace' });
  });

  it('email*,email2*,...: asks the address twice, and refuses two different ones on email2', async () => {
    const page = await setUp({ ACCOUNT_SIGNUP_FIELDS: ['email*', 'email2*', 'password1*', 'password2*'] });
    expect(inputNames((await page.get('/accounts/signup/')).body)).toEqual(['email', 'email2', 'password1', 'password2']);
    const refused = await page.post('/accounts/signup/', { email: 'ada@example.com', email2: 'ada@example.org', password1: PASSWORD, password2: PASSWORD });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/id="email2-errors"><li>You must type the same email each time\.<\/li>/);
    expect(await latchkey.users.findByEmail('ada@example.com')).toBeUndefined();
    const accepted = await page.post('/accounts/signup/', { email: 'ada@example.com', email2: 'Ada@Example.com', password1: PASSWORD, password2: PASSWORD });
    expect(accepted.statusCode).toBe(302);
  });

  it('lays the form out in the order of the list', async () => {
    const page = await setUp({ ACCOUNT_SIGNUP_FIELDS: ['username*', 'password1*', 'name', 'email*'] }, 'username');
    expect(inputNames((await page.get('/accounts/signup/')).body)).toEqual(['username', 'password1', 'name', 'email']);
    // Without password2 the password is asked once, and nothing compares it.
    const accepted = await page.post('/accounts/signup/', { username: 'ada', password1: PASSWORD, email: 'ada@example.com' });
    expect(accepted.statusCode).toBe(302);
    expect(await latchkey.users.findByUsername('ada')).toMatchObject({ name: '' });
  });

  describe.each(['browser', 'app'] as const)('the headless signup (%s client)', (client) => {
    it('reads the same list: a required name is asked for, and stored', async () => {
      latchkey = await createTestLatchkey({ kind, usernameType: 'email', settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ACCOUNT_SIGNUP_FIELDS: ['email*', 'name*', 'password1*'] } });
      const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
      const refused = await api.post('/auth/signup', { email: 'ada@example.com', password: PASSWORD });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ status: 400, errors: [{ message: 'This field is required.', code: 'required', param: 'name' }] });
      expect(await latchkey.users.findByEmail('ada@example.com')).toBeUndefined();
      const accepted = await api.post('/auth/signup', { email: 'ada@example.com', name: 'Ada Lovelace', password: PASSWORD });
      expect(accepted.status).toBe(200);
      expect(await latchkey.users.findByEmail('ada@example.com')).toMatchObject({ name: 'Ada Lovelace' });
    });
  });
});

describe('ACCOUNT_SIGNUP_FIELDS at start-up', () => {
  const refusal = (list: string, usernameType: 'username' | 'email' = 'username') => {
    try {
      testSettings({ usernameType, env: { LATCHKEY_ACCOUNT_SIGNUP_FIELDS: list } });
      return 'accepted';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('defaults to what the project has always asked', () => {
    expect(testSettings().ACCOUNT_SIGNUP_FIELDS).toEqual(['email*', 'username*', 'password1*', 'password2*']);
    expect(testSettings({ usernameType: 'email' }).ACCOUNT_SIGNUP_FIELDS).toEqual(['email*', 'password1*', 'password2*']);
  });

  it('refuses, in one line, an entry that cannot be a field and the lists a signup cannot serve', () => {
    expect(refusal('email*,username*,password1*,Company!')).toMatch(/^LATCHKEY_ACCOUNT_SIGNUP_FIELDS="email\*,username\*,password1\*,Company!" is not allowed: use a comma-separated list of fields, each with a trailing `\*` for required/);
    const cases: [string, 'username' | 'email', string][] = [
      ['email*,username*,password1*,email*', 'username', 'lists email twice'],
      ['email*,email,username*,password1*', 'username', 'lists email twice'],
      ['email,username*,password1*', 'username', 'must list email* (required): every account has an address'],
      ['email*,username*', 'username', 'must list password1* (required)'],
      ['email*,password1*', 'username', "must list username* (required): this project's users have a username"],
      ['email*,username*,password1*', 'email', "cannot list username: this project's users have no username"],
      ['email*,email2,password1*', 'email', 'must mark email2 required (email2*)'],
      ['email*,password1*,password2', 'email', 'must mark password2 required (password2*)'],
    ];
    for (const [list, usernameType, problem] of cases) {
      const message = refusal(list, usernameType);
      expect(message, list).toContain(problem);
      expect(message, list).not.toContain('\n');
    }
    // A name that may be one of the project's own fields passes the settings; start-up then holds
    // it to the project's declaration (user-fields.test.ts).
    expect(refusal('email*,username*,password1*,company')).toBe('accepted');
    expect(refusal('email*,password1*,password2', 'email')).toBe(
      'ACCOUNT_SIGNUP_FIELDS (LATCHKEY_ACCOUNT_SIGNUP_FIELDS) must mark password2 required (password2*) when it lists it: a confirmation left empty would confirm nothing.',
    );
  });
});

describe.each(testDatabaseKinds())("a signup's refusals, all at once, on %s", (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  const BAD = { email: 'not-an-address', username: 'no spaces allowed', name: 'x'.repeat(300), password1: 'short', password2: 'different' };
  const FIELDS = ['email*', 'username*', 'name', 'password1*', 'password2*'];

  it('the page shows every bad field\'s error in one answer, and keeps what was typed but the passwords', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_SIGNUP_FIELDS: FIELDS } });
    const page = await PageClient.create(latchkey);
    try {
      const refused = await page.post('/accounts/signup/', BAD);
      expect(refused.statusCode).toBe(400);
      const invalid = [...refused.body.matchAll(/id="([a-z0-9]+)-errors"/g)].map((match) => match[1]);
      expect(invalid).toEqual(['email', 'username', 'name', 'password1', 'password2']);
      expect(refused.body).toContain('Enter a valid email address.');
      expect(refused.body).toContain('This password is too short.');
      expect(refused.body).toContain('You must type the same password each time.');
      expect(refused.body).toContain('value="not-an-address"');
      expect(refused.body).toContain('value="no spaces allowed"');
      expect(refused.body).not.toContain('value="short"');
      expect(refused.body).not.toContain('value="different"');
      expect(await latchkey.users.count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it.each(['browser', 'app'] as const)('the headless signup (%s client) lists every bad field in allauth\'s errors, each with its param', async (client) => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_SIGNUP_FIELDS: FIELDS } });
    const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
    const refused = await api.post('/auth/signup', { email: BAD.email, username: BAD.username, name: BAD.name, password: BAD.password1 });
    expect(refused.status).toBe(400);
    const errors = refused.body.errors as { param: string; code: string }[];
    // Each password validator's refusal is its own error on `password`, as Django lists them.
    expect([...new Set(errors.map((error) => error.param))]).toEqual(['email', 'username', 'name', 'password']);
    expect(errors.find((error) => error.param === 'password')?.code).toBe('password_too_short');
    expect(await latchkey.users.count()).toBe(0);
  });
});
