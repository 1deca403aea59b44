/**
 * The project's own user fields (docs/user-fields.md) at signup: asked where ACCOUNT_SIGNUP_FIELDS
 * lists them, judged with every other field at once, stored in their columns and read back on
 * the user of every request; and start-up's refusals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { mainOf, PageClient } from '../../testing/pages.js';
import { TEST_USER_FIELD_MIGRATIONS, TEST_USER_FIELDS } from '../../testing/user-fields.js';
import { defineUserFields } from '../../core/user-fields.js';
import { dummyProviders, throughDummy } from '../../testing/dummy-sign-in.js';

const PASSWORD = 'a long enough passphrase';
const SIGNUP_FIELDS = ['email*', 'password1*', 'company', 'birth_date*', 'plan', 'newsletter'];

describe.each(testDatabaseKinds())('user fields at signup on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient | undefined;
  afterEach(async () => {
    await browser?.close();
    await latchkey.destroy();
    browser = undefined;
  });

  async function setUp(settings: Partial<SettingValues> = {}) {
    latchkey = await createTestLatchkey({
      kind,
      usernameType: 'email',
      userFields: TEST_USER_FIELDS,
      projectMigrations: TEST_USER_FIELD_MIGRATIONS,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ACCOUNT_SIGNUP_FIELDS: SIGNUP_FIELDS, ...settings },
    });
    browser = await PageClient.create(latchkey);
    return browser;
  }

  it('the page asks them in the list\'s order, with their inputs', async () => {
    const page = await setUp();
    const form = (await page.get('/accounts/signup/')).body;
    expect([...mainOf(form).matchAll(/<(?:input|select|textarea) id="id_([a-z_0-9]+)"/g)].map((match) => match[1])).toEqual(['email', 'password1', 'company', 'birth_date', 'plan', 'newsletter']);
    expect(form).toContain('<input id="id_company" name="company" type="text" value="" maxlength="100">');
    expect(form).toContain('<p class="lk-help">Where you work.</p>');
    expect(form).toContain('<input id="id_birth_date" name="birth_date" type="date" value="" required>');
    expect(form).toMatch(/<select id="id_plan" name="plan">\s*<option value="">---------<\/option>\s*<option value="free">Free<\/option><option value="team">Team<\/option>/);
    expect(form).toContain('<input id="id_newsletter" name="newsletter" type="checkbox"> Send me the newsletter</label>');
  });

  it('a signup with four bad fields gets four errors in one answer, keeps what was typed, and makes nobody', async () => {
    const page = await setUp();
    const refused = await page.post('/accounts/signup/', { email: 'not an address', password1: 'short', company: 'x'.repeat(101), birth_date: '2999-01-01', plan: 'gold' });
    expect(refused.statusCode).toBe(400);
    const errors = Object.fromEntries([...refused.body.matchAll(/id="([a-z_0-9]+)-errors"><li>([^<]+)<\/li>/g)].map((match) => [match[1], match[2]]));
    expect(errors).toEqual({
      email: 'Enter a valid email address.',
      password1: expect.stringContaining('too short') as string,
      company: 'Ensure this value has at most 100 characters (it has 101).',
      birth_date: 'Enter a date in the past.',
      plan: 'Select a valid choice. gold is not one of the available choices.',
    });
    expect(refused.body).toContain(`value="${'x'.repeat(101)}"`);
    expect(refused.body).toContain('value="2999-01-01"');
    expect(refused.body).not.toContain('value="short"');
    expect(await latchkey.users.count()).toBe(0);
  });

  it('a missing required field is refused beside the others', async () => {
    const page = await setUp();
    const refused = await page.post('/accounts/signup/', { email: 'ada@example.com', password1: PASSWORD, birth_date: '31/12/1990' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/id="birth_date-errors"><li>Enter a valid date\.<\/li>/);
    const missing = await page.post('/accounts/signup/', { email: 'ada@example.com', password1: PASSWORD });
    expect(missing.body).toMatch(/id="birth_date-errors"><li>This field is required\.<\/li>/);
    expect(await latchkey.users.count()).toBe(0);
  });

  it('a good signup stores every value typed, and the signed-in user carries them', async () => {
    const page = await setUp();
    const accepted = await page.post('/accounts/signup/', { email: 'ada@example.com', password1: PASSWORD, company: '  Analytical Engines Ltd ', birth_date: '1990-04-01', plan: 'team', newsletter: 'on' });
    expect(accepted.statusCode).toBe(302);
    const stored = await latchkey.users.findByEmail('ada@example.com');
    expect(stored).toMatchObject({ company: 'Analytical Engines Ltd', birth_date: '1990-04-01', plan: 'team', newsletter: true, seats: null, bio: '', website: '' });
    // The session's user is read with the same columns (the credential read of every request).
    const session = await latchkey.deps.store.sessions.findWithUser((await latchkey.deps.store.sessions.search({ userId: stored!.id, now: latchkey.clock.now(), idleSince: new Date(0), limit: 10 }))[0]!.idHash);
    expect(session?.user).toMatchObject({ company: 'Analytical Engines Ltd', birth_date: '1990-04-01', newsletter: true });
  });

  it('LATCHKEY_ACCOUNT_SIGNUP_FIELDS=email*,name*,password1* asks none of them', async () => {
    const page = await setUp({ ACCOUNT_SIGNUP_FIELDS: ['email*', 'name*', 'password1*'] });
    const form = (await page.get('/accounts/signup/')).body;
    expect(form).not.toContain('id_birth_date');
    const accepted = await page.post('/accounts/signup/', { email: 'ada@example.com', name: 'Ada', password1: PASSWORD, birth_date: '2999-01-01' });
    expect(accepted.statusCode).toBe(302);
    // A field the signup does not ask is not read, even when sent.
    expect(await latchkey.users.findByEmail('ada@example.com')).toMatchObject({ name: 'Ada', birth_date: null });
  });

  it('the social signup form asks the listed fields, shows every refusal at once, and stores them', async () => {
    const page = await setUp({ SOCIALACCOUNT_PROVIDERS: dummyProviders() });
    // The dummy provider vouches for the address but knows no birth date: the form asks it.
    const landed = await throughDummy(page, { id: 'ada-1', email: 'ada@example.com', email_verified: 'true', name: 'Ada' });
    expect(landed.headers.location).toBe('/accounts/3rdparty/signup/');
    const form = (await page.get('/accounts/3rdparty/signup/')).body;
    expect(form).toContain('<input id="id_company" name="company" type="text" value="" maxlength="100">');
    expect(form).toContain('<input id="id_birth_date" name="birth_date" type="date" value="" required>');

    const refused = await page.post('/accounts/3rdparty/signup/', { email: 'ada@example.com', company: 'x'.repeat(101), birth_date: '2999-01-01', plan: 'gold' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/id="company-errors"><li>Ensure this value has at most 100 characters/);
    expect(refused.body).toMatch(/id="birth_date-errors"><li>Enter a date in the past\.<\/li>/);
    expect(refused.body).toMatch(/id="plan-errors"><li>Select a valid choice\./);
    expect(await latchkey.users.count()).toBe(0);

    const accepted = await page.post('/accounts/3rdparty/signup/', { email: 'ada@example.com', company: 'Engines', birth_date: '1990-04-01', newsletter: 'on' });
    expect(accepted.statusCode).toBe(302);
    expect(await latchkey.users.findByEmail('ada@example.com')).toMatchObject({ company: 'Engines', birth_date: '1990-04-01', newsletter: true });
  });

  describe.each(['browser', 'app'] as const)('the headless signup (%s client)', (client) => {
    it('reads the listed fields from the JSON body, refuses every bad one at once, and stores good ones', async () => {
      latchkey = await createTestLatchkey({
        kind,
        usernameType: 'email',
        userFields: TEST_USER_FIELDS,
        projectMigrations: TEST_USER_FIELD_MIGRATIONS,
        settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ACCOUNT_SIGNUP_FIELDS: SIGNUP_FIELDS },
      });
      const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
      const refused = await api.post('/auth/signup', { email: 'ada@example.com', password: PASSWORD, company: 'x'.repeat(101), plan: 'gold' });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        status: 400,
        errors: [
          { message: 'Ensure this value has at most 100 characters (it has 101).', code: 'invalid', param: 'company' },
          { message: 'This field is required.', code: 'required', param: 'birth_date' },
          { message: 'Select a valid choice. gold is not one of the available choices.', code: 'invalid', param: 'plan' },
        ],
      });
      const accepted = await api.post('/auth/signup', { email: 'ada@example.com', password: PASSWORD, company: 'Engines', birth_date: '1990-04-01', newsletter: true });
      expect(accepted.status).toBe(200);
      expect(await latchkey.users.findByEmail('ada@example.com')).toMatchObject({ company: 'Engines', birth_date: '1990-04-01', newsletter: true, plan: '' });
    });
  });
});

describe('start-up', () => {
  it('refuses a signup field that is no field, in one line naming the setting', async () => {
    await expect(createTestLatchkey({ userFields: TEST_USER_FIELDS, projectMigrations: TEST_USER_FIELD_MIGRATIONS, settings: { ACCOUNT_SIGNUP_FIELDS: ['email*', 'username*', 'password1*', 'compnay'] } })).rejects.toThrow(
      /^ACCOUNT_SIGNUP_FIELDS \(LATCHKEY_ACCOUNT_SIGNUP_FIELDS\) lists compnay, which is no signup field: the fields are email, email2, username, name, password1, password2, company, birth_date/,
    );
  });

  it('refuses a field declared required but listed as optional', async () => {
    await expect(createTestLatchkey({ userFields: TEST_USER_FIELDS, projectMigrations: TEST_USER_FIELD_MIGRATIONS, settings: { ACCOUNT_SIGNUP_FIELDS: ['email*', 'username*', 'password1*', 'birth_date'] } })).rejects.toThrow(
      'ACCOUNT_SIGNUP_FIELDS (LATCHKEY_ACCOUNT_SIGNUP_FIELDS) lists birth_date as optional, but the project declares it required: list it as birth_date*.',
    );
  });

  it('refuses to start while a declared field has no column, and says what to run', async () => {
    await expect(createTestLatchkey({ userFields: TEST_USER_FIELDS })).rejects.toThrow(/^The user field\(s\) company, birth_date, .* have no column in latchkey_users yet\. Run: npm run manage -- makemigration add_user_fields/);
  });

  it("refuses, at start-up and in one line, a declaration that would clash with a user's own field", async () => {
    // Declaring does not throw: the project's fields.ts is imported before start-up can answer in one line.
    const clashing = defineUserFields({ email: { type: 'text', label: 'Email' } });
    await expect(createTestLatchkey({ userFields: clashing })).rejects.toThrow(/^User field 'email': the name is one a user already has \(docs\/user-fields\.md\)\.$/);
    expect(defineUserFields({ plan: { type: 'choice', label: 'Plan' } }).problem).toBe("User field 'plan': a choice field needs choices (docs/user-fields.md).");
  });
});
