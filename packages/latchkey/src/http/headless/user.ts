import { isUsablePassword } from '../../account/passwords/index.js';
import type { User } from '../../account/model.js';
import { userFieldValueOf } from '../../core/user-fields.js';
import type { LatchkeyDeps } from '../../deps.js';

/**
 * The user as the headless API shows them (allauth's User schema, whose adapter's serialize_user a
 * project extends): no username in projects without one, and the project's own fields declared
 * `api: true` (docs/user-fields.md), under their names. The User shape (schemas.ts) declares the
 * same fields: the answers are written from it, and a property it does not name is dropped.
 */
export function userData(deps: Pick<LatchkeyDeps, 'settings' | 'userFields'>, user: User): Record<string, unknown> {
  return {
    id: user.id,
    display: user.name || (user.username ?? user.email),
    has_usable_password: isUsablePassword(user.password),
    ...(user.email === '' ? {} : { email: user.email }),
    ...(deps.settings.USERNAME_TYPE === 'username' && user.username !== null ? { username: user.username } : {}),
    ...Object.fromEntries(apiUserFields(deps.userFields).map((field) => [field.name, userFieldValueOf(user, field)])),
  };
}

/** The project's fields that are part of the user in the APIs (`api: true`), in declaration order. */
export function apiUserFields<Field extends { api: boolean }>(fields: readonly Field[]): Field[] {
  return fields.filter((field) => field.api);
}
