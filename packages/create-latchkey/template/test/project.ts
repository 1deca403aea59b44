/**
 * The site's Latchkey for the tests, set up as src/server.ts sets up the real one, and the user
 * fields the tests of the profile page and the API declare for themselves.
 */
import { addUserFieldColumn, defineUserFields, type ProjectMigrations } from '@latchkey/core';
import { createTestLatchkey, type TestLatchkey, type TestLatchkeyOptions } from '@latchkey/core/testing';
import { LOCALE_DIRS, TEMPLATE_DIRS } from '../src/app.js';
import { projectSettings } from '../src/config/settings.js';
import { projectMigrations } from '../src/migrations/index.js';
import { userFields } from '../src/users/fields.js';

/**
 * A Latchkey on a fresh database of its own with this project's templates, translation catalogs,
 * username type, user fields (src/users/fields.ts) and migrations (src/migrations/), which add
 * those fields' columns; `options` go on top.
 */
export function createProjectLatchkey(options: TestLatchkeyOptions = {}): Promise<TestLatchkey> {
  return createTestLatchkey({ templateDirs: TEMPLATE_DIRS, localeDirs: LOCALE_DIRS, usernameType: projectSettings.USERNAME_TYPE, userFields, projectMigrations, ...options });
}

/** Today as an ISO day ('2026-12-03'): a birth date comes before it. */
function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/**
 * User fields of the tests' own, whatever src/users/fields.ts declares, so that the profile page
 * and the API are tested with fields of every kind of use: a person may change company, birth_date
 * (required) and newsletter; the API shows company, birth_date and seats, which only staff change;
 * notes are staff's alone. node_modules/@latchkey/core/docs/user-fields.md.
 */
export const TEST_FIELDS = defineUserFields({
  company: { type: 'text', label: 'Company', help: 'Where you work, if you like.', maxLength: 100, api: true },
  birth_date: {
    type: 'date',
    label: 'Date of birth',
    required: true,
    check: (day) => (day !== null && day >= today() ? 'Enter a date in the past.' : undefined),
    api: true,
  },
  newsletter: { type: 'boolean', label: 'Send me the newsletter' },
  seats: { type: 'integer', label: 'Seats', min: 1, editable: false, api: true },
  notes: { type: 'longtext', label: 'Staff notes', editable: false },
});

/** Their columns, as the migration `npm run manage -- makemigration` writes. */
export const TEST_FIELD_MIGRATIONS: ProjectMigrations = {
  '20261203_101500_add_test_fields': {
    async up(db, context) {
      for (const field of TEST_FIELDS.fields) await addUserFieldColumn(db, context, field.name, field.type);
    },
  },
};

/** A Latchkey with the tests' own fields (TEST_FIELDS) in place of the project's. */
export function createLatchkeyWithTestFields(options: TestLatchkeyOptions = {}): Promise<TestLatchkey> {
  return createProjectLatchkey({ userFields: TEST_FIELDS, projectMigrations: TEST_FIELD_MIGRATIONS, ...options });
}
