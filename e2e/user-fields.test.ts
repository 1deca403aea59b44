/**
 * The project's own user fields in Chromium, on a copy of the example site that followed
 * docs/user-fields.md (its src/users/fields.ts, word for word, and the migration `makemigration`
 * writes for it): a person signs up with a company and a birth date, sees every error of a bad
 * submission at once with what they typed kept, changes the company on their profile page and
 * reads both back from the API; staff find them in the admin's list by company and see both on
 * the user's page. Every page is screenshotted in the e2e artifacts.
 *
 * The journey runs once, on SQLite: the pages, the headless signup, the API and the admin are
 * tested with the same fields on both databases without a browser (http/pages/user-fields.test.ts,
 * http/admin/user-fields.test.ts, the generated project's user-fields-example.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logInToAdmin, openFromIndex, rowTexts, search, useSuperuser } from './admin-journey.js';
import { browserTestsEnabled } from './harness.js';
import { JOURNEY_TIMEOUT_MS, newAccount, PASSWORD, Person, useSiteAndBrowser } from './journey.js';

/** The files docs/user-fields.md shows: `src/users/fields.ts` is the one a site runs with. */
function declaredFields(): string {
  const page = readFileSync(join(import.meta.dirname, '..', 'docs', 'user-fields.md'), 'utf8');
  const block = /^```ts src\/users\/fields\.ts\n([\s\S]*?)^```$/m.exec(page);
  if (!block) throw new Error('docs/user-fields.md shows no src/users/fields.ts.');
  return block[1]!;
}

/** What `manage makemigration add_company_and_birth_date` writes for the declaration, and the list it joins. */
const MIGRATION = `import { addUserFieldColumn, dropUserFieldColumn, type ProjectMigration } from '@latchkey/core';

export const migration: ProjectMigration = {
  async up(db, context) {
    await addUserFieldColumn(db, context, 'company', 'text');
    await addUserFieldColumn(db, context, 'birth_date', 'date');
  },
  async down(db) {
    await dropUserFieldColumn(db, 'birth_date');
    await dropUserFieldColumn(db, 'company');
  },
};
`;
const MIGRATION_INDEX = `import type { ProjectMigrations } from '@latchkey/core';
import { migration as m20261203_101500_add_company_and_birth_date } from './20261203_101500_add_company_and_birth_date.js';

export const projectMigrations: ProjectMigrations = {
  '20261203_101500_add_company_and_birth_date': m20261203_101500_add_company_and_birth_date,
};
`;

describe.runIf(browserTestsEnabled())("the project's own user fields", () => {
  const journey = useSiteAndBrowser({
    files: {
      'src/users/fields.ts': declaredFields(),
      'src/migrations/20261203_101500_add_company_and_birth_date.ts': MIGRATION,
      'src/migrations/index.ts': MIGRATION_INDEX,
    },
    env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional', LATCHKEY_ACCOUNT_SIGNUP_FIELDS: 'email*,username*,password1*,password2*,company,birth_date*' },
    startTimeoutMs: 80_000,
  });
  const keeper = useSuperuser(journey);

  it('signs up with both, sees every error at once, changes them on the profile page, and staff find them in the admin', async () => {
    const ada = newAccount('ada');
    const person = await Person.open(journey.browser, journey.site, 'fields');
    await person.visit('/accounts/signup/', 'signup-form');
    expect(await person.page.getByLabel('Company').count()).toBe(1);
    expect(await person.page.getByLabel('Date of birth').getAttribute('type')).toBe('date');

    // The browser itself stops the company at its 100 characters (the input's maxlength).
    await person.fill({ company: 'A'.repeat(101) });
    expect((await person.page.getByLabel('Company').inputValue()).length).toBe(100);
    // Two mistakes, two errors, one answer: what was typed stays, the passwords aside.
    await person.fill({ email: ada.email, username: ada.username, password1: ada.password, password2: `${ada.password}!`, company: 'Analytical Engines', birth_date: '2999-01-01' });
    await person.press('Sign up', 'signup-errors');
    expect(await person.formErrors()).toEqual(['You must type the same password each time.', 'Enter a date in the past.']);
    expect(await person.page.getByLabel('Company').inputValue()).toBe('Analytical Engines');
    expect(await person.page.getByLabel('Date of birth').inputValue()).toBe('2999-01-01');
    expect(await person.page.getByLabel('Password', { exact: true }).inputValue()).toBe('');

    await person.fill({ password1: ada.password, password2: ada.password, company: 'Analytical Engines', birth_date: '1990-04-01' });
    await person.press('Sign up', 'signed-up');
    expect(person.pathname()).toBe(`/users/${ada.username}/`);
    expect(await person.text()).toContain('Analytical Engines');

    // The profile page: the same rules, the same errors at once.
    await person.visit('/users/~update/', 'profile-form');
    expect(await person.page.getByLabel('Company').inputValue()).toBe('Analytical Engines');
    await person.fill({ company: 'Difference Engines', birth_date: '2999-01-01' });
    await person.press('Update', 'profile-errors');
    expect(await person.formErrors()).toEqual(['Enter a date in the past.']);
    expect(await person.page.getByLabel('Company').inputValue()).toBe('Difference Engines');
    await person.fill({ birth_date: '1990-04-02' });
    await person.press('Update', 'profile-saved');
    expect(await person.text()).toContain('Difference Engines');

    // The API, with the browser's session.
    const me = await person.page.request.get('/api/users/me/');
    expect(await me.json()).toMatchObject({ username: ada.username, company: 'Difference Engines', birth_date: '1990-04-02' });

    // Staff: the list's column and search, and the user's page.
    const staff = await Person.open(journey.browser, journey.site, 'fields-staff');
    await logInToAdmin(staff, keeper, PASSWORD, 'fields-admin');
    await openFromIndex(staff, 'Users', 'fields-admin-users');
    expect(await staff.page.locator('main table thead').innerText()).toContain('Company');
    await search(staff, { q: 'Difference' }, 'fields-admin-search');
    const found = await rowTexts(staff);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(ada.username);
    expect(found[0]).toContain('Difference Engines');
    await staff.follow(ada.username, 'fields-admin-user', staff.page.locator('main table'));
    expect(await staff.page.getByLabel('Company').inputValue()).toBe('Difference Engines');
    expect(await staff.page.getByLabel('Date of birth').inputValue()).toBe('1990-04-02');
  }, JOURNEY_TIMEOUT_MS);
});
