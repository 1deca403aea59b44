import type { EmailAddress, User } from '../account/model.js';
import type { AdminPermission } from '../admin/model.js';
import type { Authenticator } from '../mfa/model.js';
import type { SocialAccount, SocialApp, SocialToken } from '../socialaccount/model.js';
import type { ApiToken } from '../tokens/model.js';
import type { DjangoKind, DjangoLoginField, DjangoRows } from './model.js';

/**
 * Where a Django project's account data is read from: its database (PostgreSQL or SQLite, opened
 * read-only) or a `manage.py dumpdata` file. storage/django/ implements both.
 */
export interface DjangoSource {
  /** What was opened, for messages; never holds a password. */
  readonly description: string;
  /** The user model's login field: 'email' when users_user has no username column (or the dump's users have no `username`). */
  loginField(): Promise<DjangoLoginField>;
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
 * Writes Latchkey's rows, made from a Django project's, in batches. Every row keeps its Django id
 * (its primary key, or its user's for a token), so that a second run finds what the first wrote.
 * Each method answers one outcome per row, in order: a row whose id holds another row, or whose
 * unique value (an email, a username, a provider uid, ...) another row holds, is skipped with the
 * reason; no row is changed once written.
 */
export interface AccountImportWriter {
  users(rows: readonly User[]): Promise<RowOutcome[]>;
  emailAddresses(rows: readonly EmailAddress[]): Promise<RowOutcome[]>;
  apiTokens(rows: readonly ApiToken[]): Promise<RowOutcome[]>;
  authenticators(rows: readonly ImportedAuthenticator[]): Promise<RowOutcome[]>;
  socialApps(rows: readonly SocialApp[]): Promise<RowOutcome[]>;
  socialAccounts(rows: readonly SocialAccount[]): Promise<RowOutcome[]>;
  socialTokens(rows: readonly SocialToken[]): Promise<RowOutcome[]>;
  adminPermissions(rows: readonly ImportedPermission[]): Promise<RowOutcome[]>;
}

/** Latchkey's database, as the import writes to it (storage/kysely/django-import-target.ts). */
export interface AccountImportTarget {
  /**
   * Runs `work` in one database transaction: all of the import or none of it. With `dryRun` the
   * transaction is rolled back once `work` has finished, so the outcomes are those of a real run
   * and nothing stays. Before a commit, PostgreSQL's id sequences are moved past the ids written,
   * so that rows made later do not collide with imported ones.
   */
  transaction<T>(dryRun: boolean, work: (writer: AccountImportWriter) => Promise<T>): Promise<T>;
}
