/**
 * The project's user fields (core/user-fields.ts) among a change or a new user's fields: each
 * value judged by the field's rules, every refusal kept (FieldChecks) so that a form shows them
 * all at once. Every way a value reaches the users table goes through here: a signup, the
 * profile page, the API, the admin, the project's own latchkey.users calls.
 */
import type { FieldChecks } from '../core/errors.js';
import { parseUserFieldInput, type UserField, type UserFieldValue } from '../core/user-fields.js';

/**
 * The clean values of the fields among `given` that it names (undefined is "not given" and left
 * alone); a refused one is left out, its refusal in `checks`. `fields` limits which may be given
 * at all (the person's own page gives only the editable ones); others are ignored.
 */
export async function cleanUserFieldValues(fields: readonly UserField[], given: object, checks: FieldChecks): Promise<Record<string, UserFieldValue>> {
  const raw = given as Record<string, unknown>;
  const clean: Record<string, UserFieldValue> = {};
  for (const field of fields) {
    if (raw[field.name] === undefined) continue;
    const value = await checks.check(() => parseUserFieldInput(field, raw[field.name]));
    if (value !== undefined) clean[field.name] = value;
  }
  return clean;
}

/**
 * The clean values of every field a form asks (a signup's, the profile page's): each one is
 * judged, absent counting as empty, so that a required field left out is refused like one left
 * blank. `fields` carry whether this form requires them.
 */
export async function cleanAskedUserFields(fields: readonly UserField[], given: object, checks: FieldChecks): Promise<Record<string, UserFieldValue>> {
  const raw = given as Record<string, unknown>;
  const clean: Record<string, UserFieldValue> = {};
  for (const field of fields) {
    const value = await checks.check(() => parseUserFieldInput(field, raw[field.name]));
    if (value !== undefined) clean[field.name] = value;
  }
  return clean;
}
