import { defineUserFields, type UserFieldValues } from '@latchkey/core';

/**
 * The project's own user fields (cookiecutter-django's custom User model): each declared once,
 * here, and read from here by the signup (where ACCOUNT_SIGNUP_FIELDS lists it), the profile page
 * (/users/~update/), the admin, /api/users/me/ and the headless API's user. For example:
 *
 *   company: { type: 'text', label: 'Company', maxLength: 100, admin: { list: true }, api: true },
 *
 * then `npm run manage -- makemigration add_company` and `npm run manage -- migrate` add its
 * column. Every kind and option: node_modules/@latchkey/core/docs/user-fields.md.
 */
// `<Record<never, never>>` tells TypeScript that there is no field yet (from an empty `{}` alone it
// would let request.user have any property): remove it with the first field you declare.
export const userFields = defineUserFields<Record<never, never>>({});

// request.user.company (and every field above), typed in every file of the project.
declare module '@latchkey/core' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the declaration's fields are its members
  interface ProjectUserFields extends UserFieldValues<typeof userFields> {}
}
