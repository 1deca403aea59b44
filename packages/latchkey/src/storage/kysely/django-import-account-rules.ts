import type { EmailAddress, User } from '../../account/model.js';
import type { UsernameType } from '../../config/settings.js';
import { normalizeUsernameKey } from '../../core/identifiers.js';
import type { ImportedPermission } from '../../django-import/ports.js';
import type { ApiToken } from '../../tokens/model.js';
import { defined, ids, inChunks, type Db, type TableRules } from './django-import-rows.js';
import { toBooleanColumn, toInstantColumn } from './schema.js';

// The import's rules for users and what is theirs alone: email addresses, API tokens, admin permissions.

export function usersRules(usernameType: UsernameType): TableRules<User> {
  const byUsername = usernameType === 'username';
  const loginOf = (user: User): string => (byUsername ? normalizeUsernameKey(user.username ?? '') : user.email);
  return {
    idOf: (user) => user.id,
    identity: loginOf,
    existing: async (db, rows) => {
      const found = await db.selectFrom('latchkey_users').select(['id', 'email', ...(byUsername ? (['username_key'] as const) : [])]).where('id', 'in', ids(rows, (user) => user.id)).execute();
      return new Map(found.map((row) => [row.id, byUsername ? String((row as { username_key?: string | null }).username_key) : row.email]));
    },
    takenReason: (id) => `id ${id} is another user's in Latchkey`,
    unique: [
      {
        of: loginOf,
        holders: async (db, rows) => {
          const values = defined(rows.map(loginOf));
          const column = byUsername ? 'username_key' : 'email';
          const found = await db.selectFrom('latchkey_users').select(['id', `${column} as value`]).where(column, 'in', values).execute();
          return new Map(found.map((row) => [String(row.value), row.id]));
        },
        reason: (holder) =>
          byUsername ? `its username is user ${holder}'s in Latchkey, which compares usernames ignoring case` : `its email address is user ${holder}'s in Latchkey`,
      },
    ],
    insert: (db, rows) =>
      inChunks(rows, (chunk) =>
        db
          .insertInto('latchkey_users')
          .values(
            chunk.map((user) => ({
              id: user.id,
              ...(byUsername ? { username: user.username ?? '', username_key: loginOf(user) } : {}),
              email: user.email,
              name: user.name,
              password: user.password,
              is_active: toBooleanColumn(user.isActive),
              is_staff: toBooleanColumn(user.isStaff),
              is_superuser: toBooleanColumn(user.isSuperuser),
              date_joined: toInstantColumn(user.dateJoined),
              last_login: user.lastLogin ? toInstantColumn(user.lastLogin) : null,
            })),
          )
          .execute(),
      ),
  };
}

/** The rows of the users in `rows`, for the rules that compare a row with its user's others. */
async function addressesOfUsers(db: Db, rows: readonly EmailAddress[]) {
  return db.selectFrom('latchkey_email_addresses').select(['id', 'user_id', 'email', 'verified', 'is_primary']).where('user_id', 'in', ids(rows, (address) => address.userId)).execute();
}

export const emailAddressRules: TableRules<EmailAddress> = {
  idOf: (address) => address.id,
  identity: (address) => `${address.userId}:${address.email}`,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_email_addresses').select(['id', 'user_id', 'email']).where('id', 'in', ids(rows, (address) => address.id)).execute();
    return new Map(found.map((row) => [row.id, `${row.user_id}:${row.email}`]));
  },
  takenReason: (id) => `id ${id} is another email address's in Latchkey`,
  unique: [
    {
      of: (address) => `${address.userId}:${address.email}`,
      holders: async (db, rows) => new Map((await addressesOfUsers(db, rows)).map((row) => [`${row.user_id}:${row.email}`, row.id])),
      reason: (holder) => `the user has this address already in Latchkey (id ${holder})`,
    },
    {
      of: (address) => (address.primary ? String(address.userId) : undefined),
      holders: async (db, rows) => new Map((await addressesOfUsers(db, rows)).filter((row) => Boolean(row.is_primary)).map((row) => [String(row.user_id), row.id])),
      reason: (holder) => `the user has another primary address (id ${holder})`,
    },
    {
      of: (address) => (address.verified ? address.email : undefined),
      holders: async (db, rows) => {
        const emails = defined(rows.map((address) => (address.verified ? address.email : undefined)));
        const found = await db.selectFrom('latchkey_email_addresses').select(['id', 'email']).where('email', 'in', emails).where('verified', '=', 1).execute();
        return new Map(found.map((row) => [row.email, row.id]));
      },
      reason: (holder) => `another user has verified this address (email address id ${holder})`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_email_addresses')
        .values(chunk.map((address) => ({ id: address.id, user_id: address.userId, email: address.email, verified: toBooleanColumn(address.verified), is_primary: toBooleanColumn(address.primary) })))
        .execute(),
    ),
};

export const apiTokenRules: TableRules<ApiToken> = {
  idOf: (token) => token.userId,
  identity: (token) => token.keyHash,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_api_tokens').select(['user_id', 'key_hash']).where('user_id', 'in', ids(rows, (token) => token.userId)).execute();
    return new Map(found.map((row) => [row.user_id, row.key_hash]));
  },
  takenReason: () => 'the user has another API token in Latchkey',
  unique: [
    {
      of: (token) => token.keyHash,
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_api_tokens').select(['user_id', 'key_hash']).where('key_hash', 'in', defined(rows.map((token) => token.keyHash))).execute();
        return new Map(found.map((row) => [row.key_hash, row.user_id]));
      },
      reason: (holder) => `user ${holder} has the same key`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_api_tokens')
        .values(chunk.map((token) => ({ user_id: token.userId, key_hash: token.keyHash, sealed_key: token.sealedKey, created_at: toInstantColumn(token.createdAt) })))
        .execute(),
    ),
};

const permissionKey = ({ userId, permission }: ImportedPermission): string => `${userId}:${permission.model}:${permission.action}`;

export const adminPermissionRules: TableRules<ImportedPermission> = {
  idOf: permissionKey,
  identity: permissionKey,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_admin_permissions').selectAll().where('user_id', 'in', ids(rows, (row) => row.userId)).execute();
    return new Map(found.map((row) => [`${row.user_id}:${row.model}:${row.action}`, `${row.user_id}:${row.model}:${row.action}`]));
  },
  takenReason: () => 'the permission is there already',
  // The same grant may come twice: directly and through a group, through two groups, or on both
  // DRF's token and its admin proxy. The first is written, the others reported.
  repeatedReason: 'the user is granted it once already (directly, through another group, or on the token model and its proxy)',
  unique: [],
  insert: (db, rows) =>
    inChunks(rows, (chunk) => db.insertInto('latchkey_admin_permissions').values(chunk.map(({ userId, permission }) => ({ user_id: userId, model: permission.model, action: permission.action }))).execute()),
};
