import type { ProjectUserFields, UserField, UserFieldValue } from '../core/user-fields.js';
import { userFieldJsonSchema, userFieldValueOf } from '../core/user-fields.js';
import type { LatchkeyDeps } from '../deps.js';
import { userFieldFormValues, userFieldInput, userFieldsFromForm, type UserFieldInput } from '../http/kit/user-field-form.js';

/**
 * The project's own user fields (docs/user-fields.md), for its own pages and API views: which
 * fields a page shows, how account/_form.html draws them, and what a form or a user holds.
 * `latchkey.users.update` judges the values.
 */
export interface LatchkeyUserFields {
  /** Every declared field, in declaration order. */
  readonly all: readonly UserField[];
  /** Those a person may change themself (`editable`): their profile page and PATCH /api/users/me/. */
  readonly editable: readonly UserField[];
  /** Those that are part of the user in the APIs (`api: true`). */
  readonly inApi: readonly UserField[];
  /** The inputs of `fields`, for account/_form.html's `user_field` macro. */
  inputs(fields: readonly UserField[]): UserFieldInput[];
  /** What a submitted form gave `fields`, as sent (an unchecked box is false): pass it to latchkey.users.update, which judges it. */
  fromForm(fields: readonly UserField[], body: unknown): Partial<ProjectUserFields>;
  /** A user's values of `fields` as a form's inputs show them. */
  formValues(fields: readonly UserField[], user: object): Record<string, string>;
  /** A user's values of `fields`, as JSON gives them. */
  valuesOf(fields: readonly UserField[], user: object): Record<string, UserFieldValue>;
  /** A field's value in JSON Schema, for a view's declaration. */
  jsonSchema(field: UserField): Record<string, unknown>;
}

export function userFieldsOf(deps: Pick<LatchkeyDeps, 'userFields'>): LatchkeyUserFields {
  const all = deps.userFields;
  return {
    all,
    editable: all.filter((field) => field.editable),
    inApi: all.filter((field) => field.api),
    inputs: (fields) => fields.map((field) => userFieldInput(field)),
    fromForm: (fields, body) => userFieldsFromForm(fields, body),
    formValues: (fields, user) => userFieldFormValues(fields, user),
    valuesOf: (fields, user) => Object.fromEntries(fields.map((field) => [field.name, userFieldValueOf(user, field)])),
    jsonSchema: (field) => userFieldJsonSchema(field),
  };
}
