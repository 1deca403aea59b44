import type { EmailAddress, User } from '../account/model.js';
import type { AdminPermission } from '../admin/model.js';
import type { Authenticator, AuthenticatorType } from '../mfa/model.js';
import type { SocialAccount, SocialApp, SocialToken } from '../socialaccount/model.js';
import type { ApiToken } from '../tokens/model.js';
import type { DjangoKind, DjangoLoginField, DjangoRows, DjangoUserColumns } from './model.js';

/**
 * Where a Django project's account data is read from: its database (PostgreSQL or SQLite, opened
 * read-only) or a `manage.py dumpdata` file. storage/django/ implements both.
 */
export interface DjangoSource {
  /** What was opened, for messages; never holds a password. */
  readonly description: string;
  /** The user model's login field: 'email' when users_user has no username column (or the dump's users have no `username`). */
  loginField(): Promise<DjangoLoginField>;
  /**
   * users_user's columns beyond Latchkey's own: those the source was opened to read into
   * DjangoUser.projectColumns, found or absent, and those nothing reads (a dump's: the fields of
   * its users.user entries). All empty for a dump without users.
   */
  userColumns(): Promise<DjangoUserColumns>;
  /** Whether the source has this kind at all (a project without allauth.mfa has no mfa_authenticator). */
  has(kind: DjangoKind): Promise<boolean>;
  /** How many rows of the kind there are (0 when the source lacks it): for progress. */
  count(kind: DjangoKind): Promise<number>;
  /**
   * The rows of a kind, in batches of at most `batchSize`, in primary-key order (users by id,
   * tokens by key, permissions by user): nothing when the source lacks the kind. A batch is read
   * when the previous one has been consumed, so a million users never sit in memory at once.
   */
  rows<K extends DjangoKind>(kind: K, batchSize: number): AsyncIterable<DjangoRows[K][]>;
  close(): Promise<void>;
}

/**
 * What became of one row offered to the import: written; already in Latchkey (a row with the same
 * id and the same identity: the same user's login, the same address of the same user, ...; left
 * as Latchkey has it, so a second run changes nothing); or not written, and why.
 */
export type RowOutcome = 'inserted' | 'present' | { skipped: string };

/** An authenticator to write, with the numbers of its recovery codes already used. */
export interface ImportedAuthenticator {
  authenticator: Authenticator;
  usedRecoveryCodes: number[];
}

export interface ImportedPermission {
  userId: number;
  permission: AdminPermission;
}

/**
 * What Latchkey holds that an imported row may collide with: for each kind, the columns the
 * import's conflict rules (conflicts.ts and the files beside it) compare. Email addresses are
 * read whole, as EmailAddress.
 */
export interface StoredLogin {
  id: number;
  email: string;
  /** The folded username (core/identifiers.ts); null when the project's users log in by email. */
  usernameKey: string | null;
}

export interface StoredApiToken {
  userId: number;
  keyHash: string;
}

/** A permission row as the database holds it: model and action as plain text, because a row written by an older version may name a permission this version no longer defines. */
export interface StoredPermission {
  userId: number;
  model: string;
  action: string;
}

export interface StoredAuthenticator {
  id: number;
  userId: number;
  type: AuthenticatorType;
  credentialId: string | null;
}

export interface StoredSocialApp {
  id: number;
  provider: string;
  providerId: string;
}

export interface StoredSocialAccount {
  id: number;
  provider: string;
  uid: string;
}

export interface StoredSocialToken {
  id: number;
  accountId: number;
  appId: number | null;
}

/**
 * One table as the import sees it: reads of the rows a batch may collide with, each one
 * set-based (one query for the whole batch, whatever its size), and an INSERT of the rows the
 * rules let through. No method decides anything: which rows count as a conflict, and what
 * happens then, is the feature's (conflicts.ts).
 */
export interface ImportInserts<R> {
  /** Writes the rows as they are, keeping their ids. */
  insert(rows: readonly R[]): Promise<void>;
}

export interface UserImportTable extends ImportInserts<User> {
  withIds(ids: readonly number[]): Promise<StoredLogin[]>;
  withEmails(emails: readonly string[]): Promise<StoredLogin[]>;
  withUsernameKeys(keys: readonly string[]): Promise<StoredLogin[]>;
}

export interface EmailAddressImportTable extends ImportInserts<EmailAddress> {
  withIds(ids: readonly number[]): Promise<EmailAddress[]>;
  ofUsers(userIds: readonly number[]): Promise<EmailAddress[]>;
  /** The verified addresses among these, whoever's they are. */
  verifiedWithEmails(emails: readonly string[]): Promise<EmailAddress[]>;
}

export interface ApiTokenImportTable extends ImportInserts<ApiToken> {
  ofUsers(userIds: readonly number[]): Promise<StoredApiToken[]>;
  withKeyHashes(keyHashes: readonly string[]): Promise<StoredApiToken[]>;
}

export interface AuthenticatorImportTable extends ImportInserts<ImportedAuthenticator> {
  withIds(ids: readonly number[]): Promise<StoredAuthenticator[]>;
  /** The users' authenticators of every type but `type`. */
  ofUsersExceptType(userIds: readonly number[], type: AuthenticatorType): Promise<StoredAuthenticator[]>;
  withCredentialIds(credentialIds: readonly string[]): Promise<StoredAuthenticator[]>;
}

export interface SocialAppImportTable extends ImportInserts<SocialApp> {
  withIds(ids: readonly number[]): Promise<StoredSocialApp[]>;
  withProviders(providers: readonly string[]): Promise<StoredSocialApp[]>;
}

export interface SocialAccountImportTable extends ImportInserts<SocialAccount> {
  withIds(ids: readonly number[]): Promise<StoredSocialAccount[]>;
  withUids(uids: readonly string[]): Promise<StoredSocialAccount[]>;
}

export interface SocialTokenImportTable extends ImportInserts<SocialToken> {
  withIds(ids: readonly number[]): Promise<StoredSocialToken[]>;
  ofAccounts(accountIds: readonly number[]): Promise<StoredSocialToken[]>;
}

export interface AdminPermissionImportTable extends ImportInserts<ImportedPermission> {
  ofUsers(userIds: readonly number[]): Promise<StoredPermission[]>;
}

/** Latchkey's tables, inside the import's transaction. */
export interface AccountImportTables {
  users: UserImportTable;
  emailAddresses: EmailAddressImportTable;
  apiTokens: ApiTokenImportTable;
  authenticators: AuthenticatorImportTable;
  socialApps: SocialAppImportTable;
  socialAccounts: SocialAccountImportTable;
  socialTokens: SocialTokenImportTable;
  adminPermissions: AdminPermissionImportTable;
}

/** Latchkey's database, as the import writes to it (storage/kysely/django-import-target.ts). */
export interface AccountImportTarget {
  /**
   * Runs `work` in one database transaction: all of the import or none of it. With `dryRun` the
   * transaction is rolled back once `work` has finished, so the outcomes are those of a real run
   * and nothing stays. Before a commit, PostgreSQL's id sequences are moved past the ids written,
   * so that rows made later do not collide with imported ones.
   */
  transaction<T>(dryRun: boolean, work: (tables: AccountImportTables) => Promise<T>): Promise<T>;
}
