import type { EmailAddress } from '../../account/model.js';
import { normalizeUsernameKey } from '../../core/identifiers.js';
import type { AdminPermissionImportTable, ApiTokenImportTable, EmailAddressImportTable, StoredLogin, UserImportTable } from '../../django-import/ports.js';
import { inChunks, rowsPerInsert, type Db } from './django-import-chunks.js';
import { toBooleanColumn, toInstantColumn } from './schema.js';
import { userFieldColumnsOf, type UserShape } from './user-field-columns.js';

// The import's reads and writes of users and what is theirs alone. Each read is one query for a
// whole batch; what counts as a conflict is decided in django-import/account-conflicts.ts.

/** Latchkey's own columns of latchkey_users an imported user fills, at most. */
const LATCHKEY_USER_COLUMNS = 12;

/** Users with the project's own fields (docs/user-fields.md), each in its column of latchkey_users. */
export function userImportTable(db: Db, { usernameType, userFields }: UserShape): UserImportTable {
  const byUsername = usernameType === 'username';
  // The username columns exist only where users log in by username.
  const select = () => db.selectFrom('latchkey_users').select(['id', 'email', ...(byUsername ? (['username_key'] as const) : [])]);
  const asLogin = (row: { id: number; email: string }): StoredLogin => ({ id: row.id, email: row.email, usernameKey: (row as { username_key?: string | null }).username_key ?? null });
  return {
    withIds: async (ids) => (await select().where('id', 'in', ids).execute()).map(asLogin),
    withEmails: async (emails) => (await select().where('email', 'in', emails).execute()).map(asLogin),
    withUsernameKeys: async (keys) => (await select().where('username_key', 'in', keys).execute()).map(asLogin),
    insert: (rows) =>
      inChunks(rows, (chunk) =>
        db
          .insertInto('latchkey_users')
          .values(
            chunk.map((user) => ({
              ...userFieldColumnsOf(userFields, user),
              id: user.id,
              ...(byUsername ? { username: user.username ?? '', username_key: normalizeUsernameKey(user.username ?? '') } : {}),
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
        rowsPerInsert(LATCHKEY_USER_COLUMNS + userFields.length),
      ),
  };
}

export function emailAddressImportTable(db: Db): EmailAddressImportTable {
  const select = () => db.selectFrom('latchkey_email_addresses').select(['id', 'user_id', 'email', 'verified', 'is_primary']);
  const asAddress = (row: { id: number; user_id: number; email: string; verified: unknown; is_primary: unknown }): EmailAddress => ({
    id: row.id,
    userId: row.user_id,
    email: row.email,
    verified: Boolean(row.verified),
    primary: Boolean(row.is_primary),
  });
  return {
    withIds: async (ids) => (await select().where('id', 'in', ids).execute()).map(asAddress),
    ofUsers: async (userIds) => (await select().where('user_id', 'in', userIds).execute()).map(asAddress),
    verifiedWithEmails: async (emails) => (await select().where('email', 'in', emails).where('verified', '=', 1).execute()).map(asAddress),
    insert: (rows) =>
      inChunks(rows, (chunk) =>
        db
          .insertInto('latchkey_email_addresses')
          .values(chunk.map((address) => ({ id: address.id, user_id: address.userId, email: address.email, verified: toBooleanColumn(address.verified), is_primary: toBooleanColumn(address.primary) })))
          .execute(),
      ),
  };
}

export function apiTokenImportTable(db: Db): ApiTokenImportTable {
  const select = () => db.selectFrom('latchkey_api_tokens').select(['user_id', 'key_hash']);
  const asToken = (row: { user_id: number; key_hash: string }) => ({ userId: row.user_id, keyHash: row.key_hash });
  return {
    ofUsers: async (userIds) => (await select().where('user_id', 'in', userIds).execute()).map(asToken),
    withKeyHashes: async (keyHashes) => (await select().where('key_hash', 'in', keyHashes).execute()).map(asToken),
    insert: (rows) =>
      inChunks(rows, (chunk) =>
        db
          .insertInto('latchkey_api_tokens')
          .values(chunk.map((token) => ({ user_id: token.userId, key_hash: token.keyHash, sealed_key: token.sealedKey, created_at: toInstantColumn(token.createdAt) })))
          .execute(),
      ),
  };
}

export function adminPermissionImportTable(db: Db): AdminPermissionImportTable {
  return {
    ofUsers: async (userIds) => {
      const found = await db.selectFrom('latchkey_admin_permissions').select(['user_id', 'model', 'action']).where('user_id', 'in', userIds).execute();
      return found.map((row) => ({ userId: row.user_id, model: row.model, action: row.action }));
    },
    insert: (rows) =>
      inChunks(rows, (chunk) => db.insertInto('latchkey_admin_permissions').values(chunk.map(({ userId, permission }) => ({ user_id: userId, model: permission.model, action: permission.action }))).execute()),
  };
}
