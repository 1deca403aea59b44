/**
 * User fields a Latchkey project declares for the Django fixture's profile columns
 * (DjangoProfileColumns in django-fixture.ts), as a project moving from that Django project would
 * in its src/users/fields.ts (docs/user-fields.md), and the migration that adds their columns.
 */
import { defineUserFields, type UserFieldSet } from '../core/user-fields.js';
import { addUserFieldColumn, type ProjectMigrations } from '../storage/migrations/project.js';

/** company and birth_date, each from the column of its name: phone_extension and newsletter are left undeclared. */
export const DJANGO_PROFILE_FIELDS = defineUserFields({
  company: { type: 'text', label: 'Company', maxLength: 100 },
  birth_date: { type: 'date', label: 'Date of birth' },
});

/**
 * Every profile column declared: phone_extension under another name (djangoColumn), and a field
 * the Django project never had (plan), whose users get the empty value.
 */
export const DJANGO_PROFILE_FIELDS_MAPPED = defineUserFields({
  company: { type: 'text', label: 'Company', maxLength: 100 },
  birth_date: { type: 'date', label: 'Date of birth' },
  extension: { type: 'integer', label: 'Phone extension', min: 1, djangoColumn: 'phone_extension' },
  newsletter: { type: 'boolean', label: 'Send me the newsletter' },
  plan: { type: 'choice', label: 'Plan', choices: [['free', 'Free'], ['team', 'Team']] },
});

/** The migration that adds the columns of `userFields`, as `manage makemigration` writes it. */
export function userFieldMigrations(userFields: UserFieldSet): ProjectMigrations {
  return {
    '20261203_110000_add_profile_fields': {
      async up(db, context) {
        for (const field of userFields.fields) await addUserFieldColumn(db, context, field.name, field.type);
      },
    },
  };
}
