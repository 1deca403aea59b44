/**
 * The adapters' signup hooks as a project overrides them (docs/extending.md, "The adapters"),
 * through the pages and the headless API, on every database: AccountAdapter.populateUsername
 * (allauth's populate_username) and saveUser (allauth's save_user, with a field of the project's
 * own on its signup form).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountAdapter, type NewUserFields, type SignupSubmission, type UserToSave } from '../account/adapter.js';
import type { AccountEvent } from '../account/events.js';
import type { UsernameTaken } from '../account/usernames.js';
import { LatchkeyError } from '../core/errors.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { testDatabaseKinds } from '../testing/database.js';
import { dummyProviders, throughDummy, type DummyAnswer } from '../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey, type TestLatchkeyOptions } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';

const ADA: DummyAnswer = { id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' };

/** Usernames from the person's name (`ada.lovelace`), Latchkey's own when that is taken; one name it cannot store. */
class NamingAdapter extends AccountAdapter {
  override async populateUsername(user: NewUserFields, isTaken: UsernameTaken): Promise<string> {
    if (user.name === 'Nobody') return 'no spaces allowed';
    const fromName = user.name.toLowerCase().replaceAll(' ', '.');
    return fromName !== '' && !(await isTaken(fromName)) ? fromName : super.populateUsername(user, isTaken);
  }
}

const PASSWORD = 'a long enough passphrase';

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** A signup form with the project's own `company` field (required), and the name in two fields. */
class CompanyAdapter extends NamingAdapter {
  readonly seen: SignupSubmission[] = [];

  override async saveUser(user: NewUserFields, signup: SignupSubmission): Promise<UserToSave> {
    this.seen.push(signup);
    const company = text(signup.fields.company);
    if (company === '') throw new LatchkeyError('invalid_input', 'Tell us your company.', { param: 'company' });
    const name = [text(signup.fields.first_name), text(signup.fields.last_name)].filter((part) => part !== '').join(' ');
    return { ...(await super.saveUser(user, signup)), ...(name === '' ? {} : { name }), extra: { company, joined: new Date('2024-05-01T00:00:00Z') } };
  }
}

/** The project's signup template: Latchkey's fields, and its own. */
const SIGNUP_TEMPLATE = `{% extends "account/base.html" %}
{% from "account/_form.html" import field, csrf, errors_for %}
{% block content %}
<form method="post" action="{{ url('account_signup') }}">
  {{ csrf(csrf_token) }}
  {{ errors_for(form, "__all__") }}
  {{ field(form, "email", "Email", type="email") }}
  {{ field(form, "username", "Username") }}
  {{ field(form, "first_name", "First name") }}
  {{ field(form, "company", "Company") }}
  {{ field(form, "password1", "Password", type="password") }}
  {{ field(form, "password2", "Password (again)", type="password") }}
</form>
{% endblock %}
`;

describe.each(testDatabaseKinds())("the adapters' signup hooks, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(options: Partial<TestLatchkeyOptions> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, adapter: (settings) => new NamingAdapter(settings), ...options });
    browser = await PageClient.create(latchkey, { plugin: { headless: true } });
  }

  it("populateUsername: a person signed up at once through a provider gets the project's username, or the form when it cannot be stored", async () => {
    await setUp({ settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() } });
    await throughDummy(browser, ADA);
    expect((await latchkey.users.findByEmail('ada@example.com'))?.username).toBe('ada.lovelace');

    // Taken: the override falls back to Latchkey's own (the address's local part).
    await throughDummy(browser.another(), { id: 'ada-2', email: 'countess@example.com', email_verified: 'true', name: 'Ada Lovelace' });
    expect((await latchkey.users.findByEmail('countess@example.com'))?.username).toBe('countess');

    // Not a username Latchkey can store: the signup form asks the person, nothing is created.
    const nobody = browser.another();
    expect((await throughDummy(nobody, { id: 'nobody', email: 'nobody@example.com', email_verified: 'true', name: 'Nobody' })).headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await latchkey.users.findByEmail('nobody@example.com')).toBeUndefined();
  });

  describe('saveUser', () => {
    let templates: string;
    let adapter: CompanyAdapter;
    let signedUp: AccountEvent[];
    afterEach(() => rm(templates, { recursive: true, force: true }));

    async function setUpSignupForm(options: Partial<TestLatchkeyOptions> = {}): Promise<void> {
      templates = await mkdtemp(join(tmpdir(), 'latchkey-templates-'));
      await mkdir(join(templates, 'account'));
      await writeFile(join(templates, 'account', 'signup.html'), SIGNUP_TEMPLATE);
      await setUp({
        templateDirs: [templates],
        adapter: (settings) => {
          adapter = new CompanyAdapter(settings);
          return adapter;
        },
        ...options,
      });
      signedUp = [];
      latchkey.events.subscribe('user_signed_up', (event) => {
        signedUp.push(event);
      });
    }

    async function auditDataOf(email: string): Promise<Record<string, unknown> | undefined> {
      const user = await latchkey.users.findByEmail(email);
      const records = user === undefined ? [] : await latchkey.audit.listForUser(user);
      return records.find((record) => record.event === 'user_signed_up')?.data;
    }

    it("reads a field of the project's own from the signup page, refuses without it, and keeps it with the signup", async () => {
      await setUpSignupForm();
      const form = { username: 'ada', email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', password1: PASSWORD, password2: PASSWORD };
      const refused = await browser.post('/accounts/signup/', form);
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('Tell us your company.');
      // What the person typed stays in the form, their own field too.
      expect(refused.body).toContain('value="Ada"');
      expect(await latchkey.users.count()).toBe(0);

      expect((await browser.post('/accounts/signup/', { ...form, company: ' Analytical Engines ' })).statusCode).toBe(302);
      const ada = await latchkey.users.findByEmail('ada@example.com');
      expect(ada?.name).toBe('Ada Lovelace');
      const extra = { company: 'Analytical Engines', joined: '2024-05-01T00:00:00.000Z' };
      expect(await auditDataOf('ada@example.com')).toEqual({ email: 'ada@example.com', extra });
      expect(signedUp.map((event) => event.data)).toEqual([{ email: 'ada@example.com', extra }]);
      // The hook saw the fields, never a password or the CSRF token.
      const seen = adapter.seen.at(-1)!;
      expect(seen).toMatchObject({ method: 'password', fields: { username: 'ada', company: ' Analytical Engines ', first_name: 'Ada' } });
      expect(Object.keys(seen.fields).filter((name) => /password|csrf/i.test(name))).toEqual([]);
    });

    it('reads the JSON body of the headless signup the same way', async () => {
      await setUpSignupForm({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional' } });
      const app = new HeadlessTestClient(browser.app, 'app', latchkey);
      const refused = await app.post('/auth/signup', { username: 'ada', email: 'ada@example.com', password: PASSWORD });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ message: 'Tell us your company.', code: 'invalid', param: 'company' }]);
      expect((await app.post('/auth/signup', { username: 'ada', email: 'ada@example.com', password: PASSWORD, company: 'Analytical Engines', first_name: 'Ada' })).status).toBe(200);
      expect((await latchkey.users.findByEmail('ada@example.com'))?.name).toBe('Ada');
      expect(await auditDataOf('ada@example.com')).toMatchObject({ extra: { company: 'Analytical Engines' } });
    });

    it("sends a provider's new person it refuses to the social signup form, whose answer it reads", async () => {
      await setUpSignupForm({ settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() } });
      expect((await throughDummy(browser, ADA)).headers.location).toBe('/accounts/3rdparty/signup/');
      expect(adapter.seen.at(-1)).toEqual({ method: 'provider', provider: 'dummy', fields: {} });
      expect(await latchkey.users.count()).toBe(0);
      const completed = await browser.post('/accounts/3rdparty/signup/', { email: 'ada@example.com', username: 'ada', company: 'Analytical Engines' });
      expect(completed.statusCode).toBe(302);
      const ada = await latchkey.users.findByEmail('ada@example.com');
      expect(ada?.name).toBe('Ada Lovelace');
      expect(await auditDataOf('ada@example.com')).toMatchObject({ provider: 'dummy', extra: { company: 'Analytical Engines' } });
    });
  });
});
