/**
 * The user fields the library's own tests declare: one of every type, as a project would in its
 * src/users/fields.ts (docs/user-fields.md's worked example is company and birth_date), and the
 * migration that adds their columns, as `manage makemigration` writes it.
 */
import { addUserFieldColumn, type ProjectMigrations } from '../storage/migrations/project.js';
import { defineUserFields } from '../core/user-fields.js';

/** Today as an ISO day: a birth date must come before it. */
function today(): string {
  return new Date().toISOString().slice(0, 10);
}

export const TEST_USER_FIELDS = defineUserFields({
  company: { type: 'text', label: 'Company', maxLength: 100, help: 'Where you work.', admin: { list: true, search: true }, api: true },
  birth_date: {
    type: 'date',
    label: 'Date of birth',
    required: true,
    check: (day) => (day !== null && day >= today() ? 'Enter a date in the past.' : undefined),
    admin: { list: true },
    api: true,
  },
  plan: { type: 'choice', label: 'Plan', choices: [['free', 'Free'], ['team', 'Team']], admin: { list: true, filter: true }, api: true },
  newsletter: { type: 'boolean', label: 'Send me the newsletter', admin: { filter: true } },
  seats: { type: 'integer', label: 'Seats', min: 1, max: 500, editable: false, api: true },
  bio: { type: 'longtext', label: 'About you', maxLength: 2000 },
  billing_email: { type: 'email', label: 'Billing email' },
  website: { type: 'url', label: 'Website' },
});

/** The columns of TEST_USER_FIELDS, as one migration of the project's. */
export const TEST_USER_FIELD_MIGRATIONS: ProjectMigrations = {
  '20261203_100000_add_user_fields': {
    async up(db, context) {
      for (const field of TEST_USER_FIELDS.fields) await addUserFieldColumn(db, context, field.name, field.type);
    },
  },
};
