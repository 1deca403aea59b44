import type { Updateable } from 'kysely';
import { normalizeEmail, normalizeUsernameKey, tryNormalizeEmail } from '../../core/identifiers.js';
import { LatchkeyError } from '../../core/errors.js';
import type { NewUser, User, UserChanges } from '../../account/model.js';
import type { UserRepository, UserSearch } from '../../account/ports.js';
import type { UsernameType } from '../../config/settings.js';
import { translateConstraintViolations, type RepositoryContext } from './dialect.js';
import { fromInstantColumn, toBooleanColumn, toInstantColumn, type UserRow, type UsersTable } from './schema.js';
import { searchUsers } from './user-search.js';
import { userFieldColumnsOf, userFieldValuesOf } from './user-field-columns.js';
import type { UserField } from '../../core/user-fields.js';

/** A user's row, from a query that selects all its columns or only those a User is made of, the project's fields among them. */
export function toUser(row: UserRow, userFields: readonly UserField[]): User {
  return {
    ...userFieldValuesOf(userFields, row),
    id: row.id,
    // The column does not exist in projects that sign in by email.
    username: row.username ?? null,
    email: row.email,
    name: row.name,
    password: row.password,
    isActive: Boolean(row.is_active),
    isStaff: Boolean(row.is_staff),
    isSuperuser: Boolean(row.is_superuser),
    dateJoined: fromInstantColumn(row.date_joined),
    lastLogin: row.last_login === null ? null : fromInstantColumn(row.last_login),
    language: row.language,
  };
}

/**
 * The user's own email column is normalized here, not only by the caller, so that uniqueness never
 * depends on every flow remembering to normalize: "Jane@Example.com" and "jane@example.com" must
 * collide in the unique index. Projects that sign in by username may leave it empty.
 */
function userEmailColumn(email: string, usernameType: UsernameType): string {
  if (email === '' && usernameType === 'username') {
    return '';
  }
  return normalizeEmail(email);
}

function usernameColumns(input: NewUser, usernameType: UsernameType): { username?: string; username_key?: string } {
  if (usernameType === 'email') {
    if (input.username !== undefined) {
      throw new LatchkeyError('invalid_input', 'This project signs in by email, so users have no username.', { param: 'username' });
    }
    return {};
  }
  if (input.username === undefined || input.username === '') {
    throw new LatchkeyError('invalid_username', 'This field is required.', { param: 'username' });
  }
  return { username: input.username, username_key: normalizeUsernameKey(input.username) };
}

function toUserUpdate(changes: UserChanges, usernameType: UsernameType, userFields: readonly UserField[]): Updateable<UsersTable> {
  const update: Updateable<UsersTable> = userFieldColumnsOf(userFields, changes);
  if (changes.name !== undefined) update.name = changes.name;
  if (changes.email !== undefined) update.email = userEmailColumn(changes.email, usernameType);
  if (changes.password !== undefined) update.password = changes.password;
  if (changes.isActive !== undefined) update.is_active = toBooleanColumn(changes.isActive);
  if (changes.isStaff !== undefined) update.is_staff = toBooleanColumn(changes.isStaff);
  if (changes.isSuperuser !== undefined) update.is_superuser = toBooleanColumn(changes.isSuperuser);
  if (changes.language !== undefined) update.language = changes.language;
  if (changes.lastLogin !== undefined) update.last_login = changes.lastLogin === null ? null : toInstantColumn(changes.lastLogin);
  return update;
}

export function createUserRepository({ db, dialect, usernameType, userFields }: RepositoryContext): UserRepository {
  const userOf = (row: UserRow): User => toUser(row, userFields);
  async function findById(id: number): Promise<User | undefined> {
    const row = await db.selectFrom('latchkey_users').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : userOf(row);
  }

  return {
    async create(input: NewUser): Promise<User> {
      const values = {
        ...userFieldColumnsOf(userFields, input),
        ...usernameColumns(input, usernameType),
        email: userEmailColumn(input.email, usernameType),
        name: input.name ?? '',
        password: input.password,
        is_active: toBooleanColumn(input.isActive ?? true),
        is_staff: toBooleanColumn(input.isStaff ?? false),
        is_superuser: toBooleanColumn(input.isSuperuser ?? false),
        date_joined: toInstantColumn(input.dateJoined),
        last_login: null,
      };
      const row = await translateConstraintViolations(db, dialect, () =>
        db.insertInto('latchkey_users').values(values).returningAll().executeTakeFirstOrThrow(),
      );
      return userOf(row);
    },

    findById,

    async findByUsername(username: string): Promise<User | undefined> {
      if (usernameType !== 'username') {
        return undefined;
      }
      const row = await db
        .selectFrom('latchkey_users')
        .selectAll()
        .where('username_key', '=', normalizeUsernameKey(username))
        .executeTakeFirst();
      return row === undefined ? undefined : userOf(row);
    },

    async findByEmail(email: string): Promise<User | undefined> {
      const normalized = tryNormalizeEmail(email);
      if (normalized === undefined) {
        return undefined;
      }
      // Unique when signing in by email; with usernames several users may share an address, and
      // the oldest account answers.
      const row = await db
        .selectFrom('latchkey_users')
        .selectAll()
        .where('email', '=', normalized)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      return row === undefined ? undefined : userOf(row);
    },

    async update(id: number, changes: UserChanges): Promise<User | undefined> {
      const update = toUserUpdate(changes, usernameType, userFields);
      if (Object.keys(update).length === 0) {
        return findById(id);
      }
      const row = await translateConstraintViolations(db, dialect, () =>
        db.updateTable('latchkey_users').set(update).where('id', '=', id).returningAll().executeTakeFirst(),
      );
      return row === undefined ? undefined : userOf(row);
    },

    async replacePassword(id: number, expected: string, replacement: string): Promise<boolean> {
      // One conditional UPDATE: the comparison and the write are atomic in the database, so a
      // concurrent password change between them cannot be lost.
      const result = await db
        .updateTable('latchkey_users')
        .set({ password: replacement })
        .where('id', '=', id)
        .where('password', '=', expected)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(id: number): Promise<boolean> {
      const result = await db.deleteFrom('latchkey_users').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async search(query: UserSearch): Promise<User[]> {
      return (await searchUsers({ db, dialect, usernameType, userFields }, query)).map(userOf);
    },

    async count(): Promise<number> {
      const row = await db.selectFrom('latchkey_users').select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow();
      // pg returns bigint counts as strings.
      return Number(row.count);
    },
  };
}
