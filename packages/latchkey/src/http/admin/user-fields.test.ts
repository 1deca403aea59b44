/**
 * The project's own user fields in the admin (docs/user-fields.md, docs/admin.md), on each
 * database: the user's page shows each field with its label and help, an input where staff may
 * change it and its value where they may not; a save judges them with the page's other fields,
 * every refusal at once and nothing written, or stores them with the audit record of the change;
 * the users list shows their columns, searches company and filters by plan and newsletter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { User } from '../../account/model.js';
import type { UserFieldSet } from '../../core/user-fields.js';
import { ADMIN_CLIENT, addPerson, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { TEST_USER_FIELD_MIGRATIONS, TEST_USER_FIELDS } from '../../testing/user-fields.js';

const USERS = '/admin/users/user/';

/**
 * The library's test fields as a project might show them in its admin: seats read-only there
 * (`admin: { edit: false }`), the website left out (`admin: false`); the columns are the same.
 */
const ADMIN_FIELDS: UserFieldSet = {
  fields: TEST_USER_FIELDS.fields.map((field) => {
    if (field.name === 'seats') return { ...field, admin: { edit: false, list: false, search: false, filter: false } };
    if (field.name === 'website') return { ...field, admin: false };
    return field;
  }),
};

/** The list's rows, by each row's link (the username). */
function rowsOf(body: string): string[] {
  return [...body.matchAll(/\/change\/">([^<]*)<\/a><\/td>/g)].map((match) => match[1]!);
}

/** Each field's refusals on a page, by field. */
function errorsOf(body: string): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const [, field, items] of body.matchAll(/id="([a-z_0-9]+)-errors">(.*?)<\/ul>/gs)) errors[field!] = [...items!.matchAll(/<li>([^<]*)<\/li>/g)].map((item) => item[1]!);
  return errors;
}

/** A row's cells after its link, as text. */
function cellsOf(body: string, login: string): string[] {
  const row = new RegExp(`/change/">${login}</a></td>(.*?)</tr>`, 's').exec(body);
  if (row === null) throw new Error(`no row for ${login}`);
  return [...row[1]!.matchAll(/<td>(.*?)<\/td>/g)].map((match) => match[1]!);
}

describe.each(testDatabaseKinds())('the project’s user fields in the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({ kind, userFields: ADMIN_FIELDS, projectMigrations: TEST_USER_FIELD_MIGRATIONS });
    browser = await PageClient.create(latchkey);
    root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
  }

  async function signIn(username: string): Promise<void> {
    expect((await signInToAdmin(browser, username)).headers.location).toBe('/admin/');
  }

  /** A person with values in the project's fields (judged as any new user's). */
  const person = (username: string, values: Record<string, unknown> = {}) => addPerson(latchkey, username, {}, values);
  const reload = async (user: User) => (await latchkey.deps.store.users.findById(user.id))! as User & Record<string, unknown>;
  const changeRecords = async () =>
    (await latchkey.deps.store.auditLog.listForUser(root.id, 50)).filter((record) => record.event === 'admin_user_changed' && record.data.change === 'changed').map((record) => record.data);
  /** The change form as a browser sends it: the page's own fields, then the test's. */
  const save = (user: User, fields: Record<string, string>) => browser.post(`${USERS}${user.id}/change/`, { name: user.name, email: user.email, is_active: 'on', ...fields });

  const ADA = { company: 'Difference Engines', birth_date: '1815-12-10', plan: 'team', newsletter: true, seats: 12, bio: 'Notes on the engine.' };

  it('shows each field with its label and help: an input where staff may change it, its value where not, nothing for admin: false', async () => {
    await setUp();
    const ada = await person('ada', ADA);
    await signIn('root');
    const page = (await browser.get(`${USERS}${ada.id}/change/`)).body;
    expect(page).toContain('<label for="id_company">Company</label>');
    expect(page).toContain('<input id="id_company" name="company" type="text" value="Difference Engines" maxlength="100">');
    expect(page).toContain('<p class="lk-help">Where you work.</p>');
    expect(page).toContain('<input id="id_birth_date" name="birth_date" type="date" value="1815-12-10" required>');
    expect(page).toMatch(/<select id="id_plan" name="plan">\s*<option value="">---------<\/option>\s*<option value="free">Free<\/option><option value="team" selected>Team<\/option>/);
    expect(page).toContain('<input id="id_newsletter" name="newsletter" type="checkbox" checked>');
    expect(page).toContain('<label for="id_newsletter">Send me the newsletter</label>');
    expect(page).toMatch(/<textarea id="id_bio" name="bio" rows="4" maxlength="2000">Notes on the engine\.<\/textarea>/);
    expect(page).toContain('<input id="id_billing_email" name="billing_email" type="email" value="" maxlength="254">');
    // Seats is read-only in the admin: its value among the user's facts, no input.
    expect(page).toContain('<dt>Seats</dt><dd>12</dd>');
    expect(page).not.toContain('name="seats"');
    // The website is not in the admin at all.
    expect(page).not.toContain('Website');
    // The inputs come after the address and before the flags, in declaration order.
    const order = [...page.matchAll(/<(?:input|select|textarea) id="id_([a-z_0-9]+)"/g)].map((match) => match[1]);
    expect(order.slice(0, 9)).toEqual(['name', 'email', 'company', 'birth_date', 'plan', 'newsletter', 'bio', 'billing_email', 'is_active']);
  });

  it('shows staff who may only view every field as a read-only fact', async () => {
    await setUp();
    const viewer = await addPerson(latchkey, 'viewer', { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, viewer, [{ model: 'users.user', action: 'view' }], ADMIN_CLIENT);
    const ada = await person('ada', ADA);
    await signIn('viewer');
    const page = (await browser.get(`${USERS}${ada.id}/change/`)).body;
    expect(page).not.toContain('>Save</button>');
    expect(page).toContain('<dt>Company</dt><dd>Difference Engines <span class="lk-help">Where you work.</span></dd>');
    expect(page).toContain('<dt>Date of birth</dt><dd>1815-12-10</dd>');
    expect(page).toContain('<dt>Plan</dt><dd>Team</dd>');
    expect(page).toContain('<dt>Send me the newsletter</dt><dd>Yes</dd>');
    expect(page).toContain('<dt>Seats</dt><dd>12</dd>');
    expect(page).toContain('<dt>Billing email</dt><dd>-</dd>');
    expect(page).not.toContain('name="company"');
  });

  it('refuses a save with several bad values with every error at once, keeps what was typed, and changes nothing', async () => {
    await setUp();
    const ada = await person('ada', ADA);
    await signIn('root');
    const refused = await save(ada, {
      name: 'x'.repeat(256),
      company: 'y'.repeat(101),
      birth_date: '2999-01-01',
      plan: 'gold',
      newsletter: 'on',
      billing_email: 'not an address',
      bio: 'Kept, though the others are refused.',
    });
    expect(refused.statusCode).toBe(400);
    expect(errorsOf(refused.body)).toEqual({
      name: ['The name may have at most 255 characters.'],
      company: ['Ensure this value has at most 100 characters (it has 101).'],
      birth_date: ['Enter a date in the past.'],
      plan: ['Select a valid choice. gold is not one of the available choices.'],
      billing_email: ['Enter a valid email address.'],
    });
    // What staff typed is on the page again, the refused values included.
    expect(refused.body).toContain(`value="${'y'.repeat(101)}"`);
    expect(refused.body).toContain('<input id="id_birth_date" name="birth_date" type="date" value="2999-01-01" required aria-invalid="true" aria-describedby="birth_date-errors">');
    expect(refused.body).toContain('value="not an address"');
    expect(refused.body).toContain('>Kept, though the others are refused.</textarea>');
    expect(refused.body).toContain('<input id="id_newsletter" name="newsletter" type="checkbox" checked>');
    // A required field left empty is refused too, as Django's admin refuses it.
    const emptied = await save(ada, { company: ADA.company, birth_date: '', plan: ADA.plan, newsletter: 'on', bio: ADA.bio });
    expect(errorsOf(emptied.body)).toEqual({ birth_date: ['This field is required.'] });

    expect(await reload(ada)).toMatchObject({ name: '', ...ADA, billing_email: '' });
    expect(await changeRecords()).toEqual([]);
  });

  it('stores good values in the same save as the page’s other fields, and records which fields changed, never their values', async () => {
    await setUp();
    const ada = await person('ada', ADA);
    await signIn('root');
    // The newsletter box unticked sends nothing; seats, read-only here, is ignored whatever is sent.
    const saved = await save(ada, { name: 'Ada Lovelace', company: '  Analytical Engines ', birth_date: '1815-12-10', plan: 'free', bio: 'Notes on the engine.', billing_email: 'billing@example.com', seats: '400' });
    expect(saved.statusCode).toBe(302);
    expect(saved.headers.location).toBe(USERS);
    expect(await reload(ada)).toMatchObject({ name: 'Ada Lovelace', company: 'Analytical Engines', birth_date: '1815-12-10', plan: 'free', newsletter: false, seats: 12, billing_email: 'billing@example.com' });
    const [record, ...others] = await changeRecords();
    expect(others).toEqual([]);
    expect(record).toEqual({ target: ada.id, change: 'changed', fields: ['name', 'company', 'plan', 'newsletter', 'billing_email'] });
    expect(JSON.stringify(record)).not.toMatch(/Analytical|billing@/);
    expect((await browser.get(USERS)).body).toContain('The user “ada” was changed.');

    // Saved again as it is, nothing changed and nothing is recorded.
    const again = await save(await reload(ada), { company: 'Analytical Engines', birth_date: '1815-12-10', plan: 'free', bio: 'Notes on the engine.', billing_email: 'billing@example.com' });
    expect(again.statusCode).toBe(302);
    expect(await changeRecords()).toHaveLength(1);
  });

  it('shows a column for each listed field, searches company by its start, and filters by plan and newsletter', async () => {
    await setUp();
    latchkey.clock.advance(60_000);
    await person('ada', ADA);
    latchkey.clock.advance(60_000);
    await person('grace', { company: 'Navy', birth_date: '1906-12-09', plan: 'free', newsletter: false });
    latchkey.clock.advance(60_000);
    await person('alan');
    await signIn('root');

    const list = (await browser.get(USERS)).body;
    expect(list).toMatch(/<th scope="col">Active<\/th>\s*<th scope="col">Company<\/th><th scope="col">Date of birth<\/th><th scope="col">Plan<\/th>\s*<th scope="col"[^>]*><a href="[^"]*">ID<\/a>/);
    expect(list).not.toContain('<th scope="col">Send me the newsletter</th>');
    expect(rowsOf(list)).toEqual(['alan', 'grace', 'ada', 'root']);
    // The email, name, joined, staff, superuser and active cells, then the fields', then the id.
    expect(cellsOf(list, 'ada').slice(6, 9)).toEqual(['Difference Engines', '1815-12-10', 'Team']);
    expect(cellsOf(list, 'grace').slice(6, 9)).toEqual(['Navy', '1906-12-09', 'Free']);
    expect(cellsOf(list, 'alan').slice(6, 9)).toEqual(['-', '-', '-']);
    expect(list).toContain('or a name (its first or second word), or of: Company</label>');

    // The search looks in company by its start, in any case, beside the login, address and name.
    expect(rowsOf((await browser.get(`${USERS}?q=DIFFER`)).body)).toEqual(['ada']);
    expect(rowsOf((await browser.get(`${USERS}?q=navy`)).body)).toEqual(['grace']);
    expect((await browser.get(`${USERS}?q=engines`)).body).toContain('No user matches.');

    // The filters, in the flags' style: All / Yes / No, and All and each choice by its label.
    expect(list).toMatch(/<nav aria-label="Plan">\s*<span>Plan:<\/span>\s*<a href="\/admin\/users\/user\/" aria-current="true">All<\/a><a href="\/admin\/users\/user\/\?plan=free">Free<\/a><a href="\/admin\/users\/user\/\?plan=team">Team<\/a>/);
    expect(list).toMatch(/<nav aria-label="Send me the newsletter">\s*<span>Send me the newsletter:<\/span>/);
    expect(list).toContain(`<a href="${USERS}?newsletter=1">Yes</a><a href="${USERS}?newsletter=0">No</a>`);
    const team = await browser.get(`${USERS}?plan=team`);
    expect(rowsOf(team.body)).toEqual(['ada']);
    expect(team.body).toContain(`<a href="${USERS}?plan=team" aria-current="true">Team</a>`);
    // A new search keeps the filter, and the filter's links keep the search.
    expect(team.body).toContain('<input type="hidden" name="plan" value="team">');
    expect((await browser.get(`${USERS}?q=navy`)).body).toContain(`<a href="${USERS}?q=navy&amp;plan=team">Team</a>`);
    expect(rowsOf((await browser.get(`${USERS}?plan=free`)).body)).toEqual(['grace']);
    expect(rowsOf((await browser.get(`${USERS}?newsletter=1`)).body)).toEqual(['ada']);
    expect(rowsOf((await browser.get(`${USERS}?newsletter=0`)).body)).toEqual(['alan', 'grace', 'root']);
    expect(rowsOf((await browser.get(`${USERS}?plan=free&newsletter=1`)).body)).toEqual([]);
    expect(rowsOf((await browser.get(`${USERS}?q=navy&plan=team`)).body)).toEqual([]);
    // A value that is no choice is no filter, as a bad is_staff is.
    expect(rowsOf((await browser.get(`${USERS}?plan=gold`)).body)).toEqual(['alan', 'grace', 'ada', 'root']);
  });
});
