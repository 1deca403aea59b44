import { sql, type Kysely, type Transaction } from 'kysely';
import type { AccountImportTarget, AccountImportWriter, ImportedAuthenticator, ImportedPermission, RowOutcome } from '../../django-import/ports.js';
import type { EmailAddress, User } from '../../account/model.js';
import type { SocialAccount, SocialApp, SocialToken } from '../../socialaccount/model.js';
import type { ApiToken } from '../../tokens/model.js';
import type { UsernameType } from '../../config/settings.js';
import { normalizeUsernameKey } from '../../core/identifiers.js';
import type { DatabaseDialect } from './dialect.js';
import { toBooleanColumn, toInstantColumn, type DatabaseSchema } from './schema.js';

type Db = Transaction<DatabaseSchema>;
type RowId = number | string;

/**
 * One unique value a table keeps (an email, a provider's uid): which rows of the database hold
 * which of the values asked about, and how to say that one does.
 */
interface UniqueValue<R> {
  /** The row's value, or undefined when the rule does not bind it (an unverified address is not unique). */
  of(row: R): string | undefined;
  holders(db: Db, rows: readonly R[]): Promise<Map<string, RowId>>;
  reason(holder: RowId): string;
}

/** How the rows of one kind are found, compared and written. */
interface TableRules<R> {
  idOf(row: R): RowId;
  /** What must match for a row already there under the same id to be this row. */
  identity(row: R): string;
  existing(db: Db, rows: readonly R[]): Promise<Map<RowId, string>>;
  takenReason(id: RowId): string;
  /** Why a second row with an id already met in this batch is not written (the sources' primary keys make it rare). */
  repeatedReason?: string;
  unique: UniqueValue<R>[];
  insert(db: Db, rows: readonly R[]): Promise<void>;
}

/** Rows per INSERT: well inside SQLite's 32,766 bound variables and PostgreSQL's 65,535 for the widest table. */
const INSERT_CHUNK = 500;

async function inChunks<R>(rows: readonly R[], write: (chunk: R[]) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) await write(rows.slice(start, start + INSERT_CHUNK));
}

/**
 * The outcome of each row: present when its id holds the same row, skipped when it holds another
 * or a unique value of the row is held by another row (in the database, or earlier in this batch),
 * inserted otherwise. Checking first, rather than letting a unique index refuse the INSERT, keeps
 * the transaction usable on PostgreSQL and names the reason.
 */
async function importRows<R>(db: Db, rules: TableRules<R>, rows: readonly R[]): Promise<RowOutcome[]> {
  const outcomes: RowOutcome[] = rows.map(() => 'inserted');
  const existing = rows.length === 0 ? new Map<RowId, string>() : await rules.existing(db, rows);
  let candidates: number[] = [];
  const met = new Set<RowId>();
  rows.forEach((row, index) => {
    const id = rules.idOf(row);
    const there = existing.get(id);
    if (met.has(id)) outcomes[index] = { skipped: rules.repeatedReason ?? 'the source holds it twice' };
    else if (there === undefined) candidates.push(index);
    else outcomes[index] = there === rules.identity(row) ? 'present' : { skipped: rules.takenReason(id) };
    met.add(id);
  });
  for (const unique of rules.unique) {
    if (candidates.every((index) => unique.of(rows[index]!) === undefined)) continue;
    const held = await unique.holders(db, candidates.map((index) => rows[index]!));
    const remaining: number[] = [];
    for (const index of candidates) {
      const row = rows[index]!;
      const value = unique.of(row);
      const holder = value === undefined ? undefined : held.get(value);
      if (holder !== undefined && holder !== rules.idOf(row)) {
        outcomes[index] = { skipped: unique.reason(holder) };
        continue;
      }
      if (value !== undefined) held.set(value, rules.idOf(row));
      remaining.push(index);
    }
    candidates = remaining;
  }
  await rules.insert(db, candidates.map((index) => rows[index]!));
  return outcomes;
}

const ids = <R>(rows: readonly R[], id: (row: R) => number): number[] => [...new Set(rows.map(id))];
const defined = (values: (string | undefined)[]): string[] => [...new Set(values.filter((value): value is string => value !== undefined))];

function usersRules(usernameType: UsernameType): TableRules<User> {
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

const emailAddressRules: TableRules<EmailAddress> = {
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

const apiTokenRules: TableRules<ApiToken> = {
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

const authenticatorRules: TableRules<ImportedAuthenticator> = {
  idOf: ({ authenticator }) => authenticator.id,
  identity: ({ authenticator }) => `${authenticator.userId}:${authenticator.type}`,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_authenticators').select(['id', 'user_id', 'type']).where('id', 'in', ids(rows, (row) => row.authenticator.id)).execute();
    return new Map(found.map((row) => [row.id, `${row.user_id}:${row.type}`]));
  },
  takenReason: (id) => `id ${id} is another authenticator's in Latchkey`,
  unique: [
    {
      // One of each type per user, but any number of WebAuthn keys.
      of: ({ authenticator }) => (authenticator.type === 'webauthn' ? undefined : `${authenticator.userId}:${authenticator.type}`),
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_authenticators').select(['id', 'user_id', 'type']).where('user_id', 'in', ids(rows, (row) => row.authenticator.userId)).where('type', '!=', 'webauthn').execute();
        return new Map(found.map((row) => [`${row.user_id}:${row.type}`, row.id]));
      },
      reason: (holder) => `the user has an authenticator of this type in Latchkey already (id ${holder})`,
    },
    {
      of: ({ authenticator }) => authenticator.credentialId ?? undefined,
      holders: async (db, rows) => {
        const credentials = defined(rows.map((row) => row.authenticator.credentialId ?? undefined));
        const found = await db.selectFrom('latchkey_authenticators').select(['id', 'credential_id']).where('credential_id', 'in', credentials).execute();
        return new Map(found.map((row) => [String(row.credential_id), row.id]));
      },
      reason: (holder) => `authenticator ${holder} has the same WebAuthn credential`,
    },
  ],
  insert: async (db, rows) => {
    await inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_authenticators')
        .values(
          chunk.map(({ authenticator }) => ({
            id: authenticator.id,
            user_id: authenticator.userId,
            type: authenticator.type,
            data: JSON.stringify(authenticator.data),
            credential_id: authenticator.credentialId,
            created_at: toInstantColumn(authenticator.createdAt),
            last_used_at: authenticator.lastUsedAt ? toInstantColumn(authenticator.lastUsedAt) : null,
          })),
        )
        .execute(),
    );
    const uses = rows.flatMap(({ authenticator, usedRecoveryCodes }) =>
      usedRecoveryCodes.map((index) => ({ authenticator_id: authenticator.id, code_index: index, used_at: toInstantColumn(authenticator.lastUsedAt ?? authenticator.createdAt) })),
    );
    await inChunks(uses, (chunk) => db.insertInto('latchkey_recovery_code_uses').values(chunk).execute());
  },
};

const socialAppRules: TableRules<SocialApp> = {
  idOf: (app) => app.id,
  identity: (app) => `${app.provider}:${app.providerId}`,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_social_apps').select(['id', 'provider', 'provider_id']).where('id', 'in', ids(rows, (app) => app.id)).execute();
    return new Map(found.map((row) => [row.id, `${row.provider}:${row.provider_id}`]));
  },
  takenReason: (id) => `id ${id} is another social app's in Latchkey`,
  unique: [
    {
      of: (app) => `${app.provider}:${app.providerId}`,
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_social_apps').select(['id', 'provider', 'provider_id']).where('provider', 'in', defined(rows.map((app) => app.provider))).execute();
        return new Map(found.map((row) => [`${row.provider}:${row.provider_id}`, row.id]));
      },
      reason: (holder) => `Latchkey has an app for this provider already (id ${holder})`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_social_apps')
        .values(
          chunk.map((app) => ({
            id: app.id,
            provider: app.provider,
            provider_id: app.providerId,
            name: app.name,
            client_id: app.clientId,
            sealed_secret: app.sealedSecret,
            key: app.key,
            settings: JSON.stringify(app.settings),
          })),
        )
        .execute(),
    ),
};

const socialAccountRules: TableRules<SocialAccount> = {
  idOf: (account) => account.id,
  identity: (account) => `${account.provider}:${account.uid}`,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_social_accounts').select(['id', 'provider', 'uid']).where('id', 'in', ids(rows, (account) => account.id)).execute();
    return new Map(found.map((row) => [row.id, `${row.provider}:${row.uid}`]));
  },
  takenReason: (id) => `id ${id} is another social account's in Latchkey`,
  unique: [
    {
      of: (account) => `${account.provider}:${account.uid}`,
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_social_accounts').select(['id', 'provider', 'uid']).where('uid', 'in', defined(rows.map((account) => account.uid))).execute();
        return new Map(found.map((row) => [`${row.provider}:${row.uid}`, row.id]));
      },
      reason: (holder) => `social account ${holder} in Latchkey is the same provider account`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_social_accounts')
        .values(
          chunk.map((account) => ({
            id: account.id,
            user_id: account.userId,
            provider: account.provider,
            uid: account.uid,
            extra_data: JSON.stringify(account.extraData),
            date_joined: toInstantColumn(account.dateJoined),
            last_login: toInstantColumn(account.lastLogin),
          })),
        )
        .execute(),
    ),
};

const socialTokenRules: TableRules<SocialToken> = {
  idOf: (token) => token.id,
  identity: (token) => String(token.accountId),
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_social_tokens').select(['id', 'account_id']).where('id', 'in', ids(rows, (token) => token.id)).execute();
    return new Map(found.map((row) => [row.id, String(row.account_id)]));
  },
  takenReason: (id) => `id ${id} is another social token's in Latchkey`,
  unique: [
    {
      of: (token) => `${token.accountId}:${token.appId ?? ''}`,
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_social_tokens').select(['id', 'account_id', 'app_id']).where('account_id', 'in', ids(rows, (token) => token.accountId)).execute();
        return new Map(found.map((row) => [`${row.account_id}:${row.app_id ?? ''}`, row.id]));
      },
      reason: (holder) => `the social account has a token for this app in Latchkey already (id ${holder})`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_social_tokens')
        .values(
          chunk.map((token) => ({
            id: token.id,
            account_id: token.accountId,
            app_id: token.appId,
            sealed_token: token.sealedToken,
            sealed_token_secret: token.sealedTokenSecret,
            expires_at: token.expiresAt ? toInstantColumn(token.expiresAt) : null,
          })),
        )
        .execute(),
    ),
};

const permissionKey = ({ userId, permission }: ImportedPermission): string => `${userId}:${permission.model}:${permission.action}`;

const adminPermissionRules: TableRules<ImportedPermission> = {
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

/** The tables whose ids come from a sequence on PostgreSQL (an identity column). */
const TABLES_WITH_IDS = ['latchkey_users', 'latchkey_email_addresses', 'latchkey_authenticators', 'latchkey_social_apps', 'latchkey_social_accounts', 'latchkey_social_tokens'] as const;

/**
 * Rows written with explicit ids leave PostgreSQL's identity sequence where it was, so the next
 * signup would be given an id an imported user has. Each sequence is moved to the largest id in
 * its table (never back). SQLite's AUTOINCREMENT keeps its counter past explicit ids by itself.
 */
async function moveSequencesPastIds(db: Db): Promise<void> {
  for (const table of TABLES_WITH_IDS) {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), greatest(coalesce((select max(id) from ${sql.table(table)}), 1), coalesce(pg_sequence_last_value(pg_get_serial_sequence(${table}, 'id')), 1)))`.execute(db);
  }
}

/** Thrown inside a dry run's transaction to roll it back once the work is done. */
class DryRunRollback extends Error {}

export function createKyselyImportTarget(kysely: Kysely<DatabaseSchema>, dialect: DatabaseDialect, usernameType: UsernameType): AccountImportTarget {
  const users = usersRules(usernameType);
  return {
    async transaction<T>(dryRun: boolean, work: (writer: AccountImportWriter) => Promise<T>): Promise<T> {
      let result: { value: T } | undefined;
      try {
        await kysely.transaction().execute(async (db) => {
          const writer: AccountImportWriter = {
            users: (rows) => importRows(db, users, rows),
            emailAddresses: (rows) => importRows(db, emailAddressRules, rows),
            apiTokens: (rows) => importRows(db, apiTokenRules, rows),
            authenticators: (rows) => importRows(db, authenticatorRules, rows),
            socialApps: (rows) => importRows(db, socialAppRules, rows),
            socialAccounts: (rows) => importRows(db, socialAccountRules, rows),
            socialTokens: (rows) => importRows(db, socialTokenRules, rows),
            adminPermissions: (rows) => importRows(db, adminPermissionRules, rows),
          };
          result = { value: await work(writer) };
          if (dryRun) throw new DryRunRollback();
          if (dialect === 'postgres') await moveSequencesPastIds(db);
        });
      } catch (error) {
        if (!(error instanceof DryRunRollback)) throw error;
      }
      return result!.value;
    },
  };
}
