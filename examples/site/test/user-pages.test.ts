/**
 * The user pages (src/users/pages.ts, cookiecutter-django's users views) as a browser sees them,
 * on every database: the landing redirect, the user's own page, the form that changes the name
 * and the user's own fields, and what anyone else gets.
 */
import { NAME_MAX_LENGTH, type User } from '@latchkey/core';
import { testDatabaseKinds, type TestLatchkey } from '@latchkey/core/testing';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { Browser, csrfTokenOf, FORM } from './browser.js';
import { createLatchkeyWithTestFields, createProjectLatchkey, TEST_FIELDS } from './project.js';

const PASSWORD = 'a long enough passphrase';
describe.each(testDatabaseKinds())('the user pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let ada: User;
  let grace: User;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  /** The site (the project's own Latchkey unless `create` makes another) with Ada and Grace. */
  async function setUp(create: () => Promise<TestLatchkey> = () => createProjectLatchkey({ kind })): Promise<void> {
    latchkey = await create();
    app = await buildApp(latchkey);
    await app.ready();
    ada = await addUser('ada', 'Ada Lovelace');
    grace = await addUser('grace', 'Grace Hopper');
  }

  function addUser(handle: string, name: string, email = `${handle}@example.com`): Promise<User> {
    return latchkey.users.create({ username: handle, email, name, password: PASSWORD, emailVerified: true });
  }

  /** The user's own page, by username. */
  function pageOf(user: User): string {
    return `/users/${encodeURIComponent(user.username!)}/`;
  }

  async function signedIn(user: User): Promise<Browser> {
    const browser = new Browser(app);
    const session = await latchkey.sessions.startSignedIn(user);
    browser.cookies.set('sessionid', session.cookieValue);
    return browser;
  }

  /** Opens the update form, as a person would, and submits it with its CSRF token and the fields. */
  async function submitProfile(browser: Browser, fields: [string, string][]): Promise<LightMyRequestResponse> {
    const form = await browser.get('/users/~update/');
    expect(form.statusCode).toBe(200);
    return browser.post('/users/~update/', [['csrfmiddlewaretoken', csrfTokenOf(form.body)], ...fields]);
  }

  const stored = async (user: User): Promise<User> => (await latchkey.users.findById(user.id))!;
  /** The values of the tests' own fields (project/TEST_FIELDS) a user has in the database. */
  const fieldsOf = async (user: User) => latchkey.userFields.valuesOf(TEST_FIELDS.fields, await stored(user));
  /** Gives a user values of the tests' own fields, as the project's code would (they are no field of ProjectUserFields). */
  const setFields = (user: User, values: Record<string, unknown>) => latchkey.users.update(user, values);
  /** Each field's first error on a page, by the field's name. */
  const errorsOn = (html: string) => Object.fromEntries([...html.matchAll(/id="([a-z_0-9]+)-errors"><li>([^<]+)<\/li>/g)].map((match): [string, string] => [match[1]!, match[2]!]));

  it("sends /users/~redirect/ on to the signed-in user's own page", async () => {
    await setUp();
    const response = await (await signedIn(ada)).get('/users/~redirect/');
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(pageOf(ada));
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('shows the user their own page: the name and how they sign in, never cached', async () => {
    await setUp();
    const browser = await signedIn(ada);
    const page = await browser.get(pageOf(ada));
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<dd id="profile-name">Ada Lovelace</dd>');
    expect(page.body).toContain('<h1>ada</h1>');
    expect(page.body).toContain('<dd id="profile-email">ada@example.com</dd>');
    expect(page.body).toContain('href="/users/~update/"');
    expect(page.body).not.toContain('Grace');
  });

  it('escapes the name it shows', async () => {
    await setUp();
    await latchkey.users.update(ada, { name: '<script>alert(1)</script>' });
    const page = await (await signedIn(ada)).get(pageOf(ada));
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.body).not.toContain('<script>');
  });

  it("answers another user's page and a lookup naming nobody with the same 404", async () => {
    await setUp();
    const browser = await signedIn(ada);
    // Grace's username, her id and Ada's own id (ids are not this project's lookup), nobody, and
    // text that is in no username (a NUL, which PostgreSQL cannot even compare).
    const lookups = ['grace', 'GRACE', String(grace.id), String(ada.id), 'nobody', 'ada%00', '%F0%9F%94%91'];
    const answers = await Promise.all(lookups.map((lookup) => browser.get(`/users/${lookup}/`)));
    const [first] = answers;
    for (const [index, answer] of answers.entries()) {
      expect(answer.statusCode, lookups[index]).toBe(404);
      expect(answer.body, lookups[index]).toBe(first!.body);
      expect(answer.headers['cache-control'], lookups[index]).toBe('no-store');
      expect(answer.headers['set-cookie'], lookups[index]).toBeUndefined();
    }
    expect(first!.body).not.toContain('Grace');
    expect(await stored(grace)).toEqual(grace);
  });

  it('has one address per user: another spelling of the own username is a 404, as in the users API; non-ASCII usernames work', async () => {
    await setUp();
    for (const spelling of ['ADA', 'Ada', '\uff41\uff44\uff41']) {
      const response = await (await signedIn(ada)).get(`/users/${encodeURIComponent(spelling)}/`);
      expect(response.statusCode, spelling).toBe(404);
    }

    const zoe = await addUser('Zoë+lab@home', 'Zoë', 'zoe@example.com');
    const browser = await signedIn(zoe);
    const landing = await browser.get('/users/~redirect/');
    // Percent-encoded UTF-8, with @ and + left as they are (as Django's reverse() writes them).
    expect(landing.headers.location).toBe('/users/Zo%C3%AB+lab@home/');
    const page = await browser.get(landing.headers.location as string);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Zoë+lab@home</h1>');
    expect((await browser.get('/users/zo%C3%AB+LAB@home/')).statusCode).toBe(404);
    // Still no one else's.
    expect((await browser.get(pageOf(ada))).statusCode).toBe(404);
  });

  it('shows the update form with the current name and a CSRF token, never cached', async () => {
    await setUp();
    const form = await (await signedIn(ada)).get('/users/~update/');
    expect(form.statusCode).toBe(200);
    expect(form.headers['cache-control']).toBe('no-store');
    expect(form.body).toContain('<form method="post" action="/users/~update/"');
    expect(form.body).toMatch(/<input id="id_name" name="name" type="text" value="Ada Lovelace"/);
    expect(csrfTokenOf(form.body)).not.toBe('');
  });

  it('changes the name, and only the name, then lands on the user\'s page showing it', async () => {
    await setUp();
    const browser = await signedIn(ada);
    const response = await submitProfile(browser, [
      ['name', '  Augusta Ada King  '],
      ['username', 'grace'],
      ['email', 'grace@example.com'],
      ['is_superuser', 'on'],
    ]);
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(pageOf(ada));
    expect(await stored(ada)).toEqual({ ...ada, name: 'Augusta Ada King' });
    expect(await stored(grace)).toEqual(grace);

    const page = await browser.get(response.headers.location as string);
    expect(page.body).toContain('<dd id="profile-name">Augusta Ada King</dd>');
    // Told once, on the page the change lands on.
    expect(page.body).toContain('Information successfully updated.');
    expect((await browser.get(response.headers.location as string)).body).not.toContain('Information successfully updated.');

    // An empty name is a name: the field is optional.
    expect((await submitProfile(browser, [['name', '']])).statusCode).toBe(302);
    expect((await stored(ada)).name).toBe('');
  });

  it('refuses a name that is too long or not text with 400 and the form error, changing nothing', async () => {
    await setUp();
    const browser = await signedIn(ada);
    const tooLong = 'x'.repeat(NAME_MAX_LENGTH + 1);
    const refused = await submitProfile(browser, [['name', tooLong]]);
    expect(refused.statusCode).toBe(400);
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.body).toContain('lk-field-invalid');
    expect(refused.body).toMatch(new RegExp(`<ul class="lk-errors" id="name-errors"><li>[^<]*${NAME_MAX_LENGTH}[^<]*</li></ul>`));
    // What was typed comes back, so that it can be shortened rather than typed again.
    expect(refused.body).toContain(`value="${tooLong}"`);
    // The refused form is a working form: it carries a token of its own.
    expect(csrfTokenOf(refused.body)).not.toBe('');

    const withNul = await submitProfile(browser, [['name', 'Ada\u0000Lovelace']]);
    expect(withNul.statusCode).toBe(400);
    expect(withNul.body).toContain('id="name-errors"');
    expect(withNul.body).not.toContain('\u0000');

    const twice = await submitProfile(browser, [['name', 'One'], ['name', 'Two']]);
    expect(twice.statusCode).toBe(400);
    expect(twice.body).toContain('Enter the name once, as text.');

    expect(await stored(ada)).toEqual(ada);
  });

  it('refuses a POST without the CSRF token, or with a wrong one, with 403 and changes nothing', async () => {
    await setUp();
    const browser = await signedIn(ada);
    // The form's page sets the CSRF cookie; only the token in the body is missing or wrong.
    await browser.get('/users/~update/');
    expect(browser.cookies.has('csrftoken')).toBe(true);
    expect((await browser.post('/users/~update/', [['name', 'Mallory']])).statusCode).toBe(403);
    expect((await browser.post('/users/~update/', [['csrfmiddlewaretoken', 'x'.repeat(64)], ['name', 'Mallory']])).statusCode).toBe(403);
    // And from another site, even with a good token.
    const form = await browser.get('/users/~update/');
    const crossSite = await browser.request({
      method: 'POST',
      url: '/users/~update/',
      headers: { ...FORM, origin: 'https://evil.example' },
      payload: new URLSearchParams({ csrfmiddlewaretoken: csrfTokenOf(form.body), name: 'Mallory' }).toString(),
    });
    expect(crossSite.statusCode).toBe(403);
    expect(await stored(ada)).toEqual(ada);
  });

  it('sends an anonymous visitor of every page to the login page, which comes back to it', async () => {
    await setUp();
    const browser = new Browser(app);
    for (const path of ['/users/~redirect/', pageOf(ada), '/users/nobody/', '/users/~update/', '/users/~update/?from=home']) {
      const response = await browser.get(path);
      expect(response.statusCode, path).toBe(302);
      expect(response.headers.location, path).toBe(`/accounts/login/?next=${encodeURIComponent(path)}`);
      expect(response.headers['cache-control'], path).toBe('no-store');
    }
    // A POST with a good token (from the login page) is sent there too, and changes nothing.
    const login = await browser.get('/accounts/login/');
    const posted = await browser.post('/users/~update/', [['csrfmiddlewaretoken', csrfTokenOf(login.body)], ['name', 'Anonymous']]);
    expect(posted.statusCode).toBe(302);
    expect(posted.headers.location).toBe(`/accounts/login/?next=${encodeURIComponent('/users/~update/')}`);
    expect(await stored(ada)).toEqual(ada);
  });

  describe("with user fields of the project's own", () => {
    const withFields = () => setUp(() => createLatchkeyWithTestFields({ kind }));

    it('draws every field a person may change, in the declared order, holding what the user has; no other', async () => {
      await withFields();
      await setFields(ada, { company: 'Analytical Engines', birth_date: '1815-12-10', newsletter: true, seats: 3, notes: 'Pays late.' });
      const form = (await (await signedIn(ada)).get('/users/~update/')).body;
      // The profile's form (every page also ends with Latchkey's language switch, a form of its own).
      const profileForm = /<form method="post" action="\/users\/~update\/"[\s\S]*?<\/form>/.exec(form)![0];
      expect([...profileForm.matchAll(/<(?:input|select|textarea) id="id_([a-z_0-9]+)"/g)].map((match) => match[1])).toEqual(['name', 'company', 'birth_date', 'newsletter']);
      expect(form).toContain('<label for="id_company">Company</label>');
      expect(form).toContain('<input id="id_company" name="company" type="text" value="Analytical Engines" maxlength="100">');
      expect(form).toContain('<p class="lk-help">Where you work, if you like.</p>');
      expect(form).toContain('<input id="id_birth_date" name="birth_date" type="date" value="1815-12-10" required>');
      expect(form).toContain('<input id="id_newsletter" name="newsletter" type="checkbox" checked> Send me the newsletter</label>');
      // Seats are staff's to change, and the notes staff's alone.
      expect(form).not.toMatch(/name="seats"|name="notes"|Pays late/);
    });

    it('shows every refusal at once, keeps what was typed, and saves nothing', async () => {
      await withFields();
      await setFields(ada, { company: 'Analytical Engines', birth_date: '1815-12-10' });
      const before = await stored(ada);
      const browser = await signedIn(ada);
      const refused = await submitProfile(browser, [
        ['name', 'x'.repeat(NAME_MAX_LENGTH + 1)],
        ['company', 'y'.repeat(101)],
        ['birth_date', '2999-01-01'],
        ['newsletter', 'on'],
      ]);
      expect(refused.statusCode).toBe(400);
      expect(errorsOn(refused.body)).toEqual({
        name: expect.stringContaining(String(NAME_MAX_LENGTH)) as string,
        company: 'Ensure this value has at most 100 characters (it has 101).',
        birth_date: 'Enter a date in the past.',
      });
      expect(refused.body).toContain(`value="${'y'.repeat(101)}"`);
      expect(refused.body).toContain('<input id="id_birth_date" name="birth_date" type="date" value="2999-01-01" required aria-invalid="true" aria-describedby="birth_date-errors">');
      expect(refused.body).toContain('<input id="id_newsletter" name="newsletter" type="checkbox" checked> Send me the newsletter</label>');
      expect(csrfTokenOf(refused.body)).not.toBe('');

      // A required field left empty, and a day that does not exist.
      const empty = await submitProfile(browser, [['name', 'Ada'], ['company', 'Engines'], ['birth_date', '']]);
      expect(empty.statusCode).toBe(400);
      expect(errorsOn(empty.body)).toEqual({ birth_date: 'This field is required.' });
      expect(empty.body).toContain('value="Engines"');
      const noSuchDay = await submitProfile(browser, [['name', 'Ada'], ['birth_date', '1815-02-30']]);
      expect(errorsOn(noSuchDay.body)).toEqual({ birth_date: 'Enter a valid date.' });

      expect(await stored(ada)).toEqual(before);
    });

    it('saves good values through Latchkey, ignoring fields a person may not change, and the page shows them by their labels', async () => {
      await withFields();
      await setFields(ada, { seats: 3, notes: 'Pays late.' });
      const browser = await signedIn(ada);
      const saved = await submitProfile(browser, [
        ['name', 'Ada King'],
        ['company', '  <b>Analytical</b> Engines  '],
        ['birth_date', '1815-12-10'],
        ['newsletter', 'on'],
        ['seats', '500'],
        ['notes', 'Pays on time.'],
      ]);
      expect(saved.statusCode).toBe(302);
      expect(saved.headers.location).toBe(pageOf(ada));
      expect(await fieldsOf(ada)).toEqual({ company: '<b>Analytical</b> Engines', birth_date: '1815-12-10', newsletter: true, seats: 3, notes: 'Pays late.' });
      expect((await stored(ada)).name).toBe('Ada King');
      expect(await fieldsOf(grace)).toEqual({ company: '', birth_date: null, newsletter: false, seats: null, notes: '' });

      const page = (await browser.get(pageOf(ada))).body;
      expect(page).toContain('Information successfully updated.');
      expect(page).toMatch(/<dt>Company<\/dt>\s*<dd id="profile-company">&lt;b&gt;Analytical&lt;\/b&gt; Engines<\/dd>/);
      expect(page).toMatch(/<dt>Date of birth<\/dt>\s*<dd id="profile-birth_date">1815-12-10<\/dd>/);
      expect(page).toMatch(/<dt>Send me the newsletter<\/dt>\s*<dd id="profile-newsletter">Yes<\/dd>/);
      expect(page).toMatch(/<dt>Seats<\/dt>\s*<dd id="profile-seats">3<\/dd>/);
      expect(page).not.toMatch(/Staff notes|Pays late/);

      // An unchecked box is a no; an optional field may be emptied.
      expect((await submitProfile(browser, [['name', 'Ada King'], ['company', ''], ['birth_date', '1815-12-10']])).statusCode).toBe(302);
      expect(await fieldsOf(ada)).toMatchObject({ company: '', newsletter: false });
      const after = (await browser.get(pageOf(ada))).body;
      expect(after).toContain('<dd id="profile-company"><em>Not given</em></dd>');
      expect(after).toContain('<dd id="profile-newsletter">No</dd>');
    });

    it('refuses a name sent twice without saving the fields sent with it', async () => {
      await withFields();
      const twice = await submitProfile(await signedIn(ada), [['name', 'One'], ['name', 'Two'], ['company', 'Engines'], ['birth_date', '1815-12-10']]);
      expect(twice.statusCode).toBe(400);
      expect(errorsOn(twice.body)).toEqual({ name: 'Enter the name once, as text.' });
      expect(twice.body).toContain('value="Engines"');
      expect(await fieldsOf(ada)).toMatchObject({ company: '', birth_date: null });
    });
  });
});
