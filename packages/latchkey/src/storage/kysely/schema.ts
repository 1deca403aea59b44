/**
 * The tables as Kysely sees them. Values cross the driver boundary in the one shape both SQLite
 * and PostgreSQL accept: booleans are written as 1/0 (better-sqlite3 cannot bind booleans, and
 * PostgreSQL's boolean input accepts '1'/'0') and read back with Boolean(); instants are written as
 * ISO 8601 strings and read back with new Date() (SQLite returns the TEXT, pg returns a Date for
 * timestamptz).
 */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { AuthenticatorType } from '../../mfa/model.js';

/** Written as 1 or 0; read as 1/0 (SQLite) or true/false (PostgreSQL). */
export type BooleanColumn = ColumnType<number | boolean, number, number>;
/** Written as an ISO string; read as a string (SQLite) or a Date (PostgreSQL). */
export type InstantColumn = ColumnType<string | Date, string, string>;

export interface UsersTable {
  id: Generated<number>;
  /** Present only when the project's usernameType is 'username'. */
  username: ColumnType<string | null, string | undefined, never>;
  /** normalizeUsernameKey(username): the unique key, present with `username`. */
  username_key: ColumnType<string | null, string | undefined, never>;
  email: string;
  name: string;
  password: string;
  is_active: BooleanColumn;
  is_staff: BooleanColumn;
  is_superuser: BooleanColumn;
  date_joined: InstantColumn;
  last_login: ColumnType<string | Date | null, string | null, string | null>;
  /** The language the person chose, or '' (migration 0012). */
  language: ColumnType<string, string | undefined, string>;
}

/** A user's row as the reads that make a User read it: every column but the username key, which only uniqueness needs. */
export type UserRow = Omit<Selectable<UsersTable>, 'username_key'>;

export interface EmailAddressesTable {
  id: Generated<number>;
  user_id: number;
  email: string;
  verified: BooleanColumn;
  is_primary: BooleanColumn;
}

export interface SessionsTable {
  id_hash: string;
  user_id: number | null;
  /** JSON text. */
  data: string;
  created_at: InstantColumn;
  last_seen_at: InstantColumn;
  expires_at: InstantColumn;
  ip_address: string;
  user_agent: string;
}

export interface MetaTable {
  name: string;
  value: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  event: string;
  user_id: number | null;
  /** The user an admin change was made to (migration 0008); null for every other record. */
  target_user_id: Generated<number | null>;
  created_at: InstantColumn;
  ip_address: string;
  user_agent: string;
  /** JSON text. */
  data: string;
}

export interface RateLimitCountersTable {
  bucket: string;
  count: number;
  expires_at: InstantColumn;
}

export interface AuthenticatorsTable {
  id: Generated<number>;
  user_id: number;
  /** One of AUTHENTICATOR_TYPES; only the repository writes it. */
  type: AuthenticatorType;
  /** JSON text. */
  data: string;
  /** A WebAuthn credential's id (base64url), unique; null for the other types. */
  credential_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: InstantColumn;
  last_used_at: ColumnType<string | Date | null, string | null, string | null>;
}

export interface RecoveryCodeUsesTable {
  authenticator_id: number;
  code_index: number;
  used_at: InstantColumn;
}

export interface OneTimeClaimsTable {
  key: string;
  expires_at: InstantColumn;
}

export interface ApiTokensTable {
  user_id: number;
  key_hash: string;
  sealed_key: string;
  created_at: InstantColumn;
}

export interface SocialAppsTable {
  id: Generated<number>;
  provider: string;
  provider_id: string;
  name: string;
  client_id: string;
  sealed_secret: string;
  key: string;
  /** JSON text. */
  settings: string;
}

export interface SocialAccountsTable {
  id: Generated<number>;
  user_id: number;
  provider: string;
  uid: string;
  /** JSON text. */
  extra_data: string;
  date_joined: InstantColumn;
  last_login: InstantColumn;
}

export interface SocialTokensTable {
  id: Generated<number>;
  account_id: number;
  app_id: number | null;
  sealed_token: string;
  sealed_token_secret: string;
  expires_at: ColumnType<string | Date | null, string | null, string | null>;
}

export interface AdminPermissionsTable {
  user_id: number;
  /** Written from ADMIN_MODELS; read back as any text, since an older row may name a model since removed. */
  model: string;
  /** Likewise, from ADMIN_ACTIONS. */
  action: string;
}

export interface MailOutboxTable {
  id: Generated<number>;
  queued_at: InstantColumn;
  /** JSON array text. */
  recipients: string;
  subject: string;
  /** JSON text of the EmailMessage; '' once abandoned. */
  message: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: InstantColumn;
  claimed_until: ColumnType<string | Date | null, string | null | undefined, string | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  abandoned_at: ColumnType<string | Date | null, string | null | undefined, string | null>;
}

export interface DatabaseSchema {
  latchkey_users: UsersTable;
  latchkey_email_addresses: EmailAddressesTable;
  latchkey_sessions: SessionsTable;
  latchkey_meta: MetaTable;
  latchkey_audit_log: AuditLogTable;
  latchkey_rate_limit_counters: RateLimitCountersTable;
  latchkey_authenticators: AuthenticatorsTable;
  latchkey_recovery_code_uses: RecoveryCodeUsesTable;
  latchkey_one_time_claims: OneTimeClaimsTable;
  latchkey_api_tokens: ApiTokensTable;
  latchkey_social_apps: SocialAppsTable;
  latchkey_social_accounts: SocialAccountsTable;
  latchkey_social_tokens: SocialTokensTable;
  latchkey_admin_permissions: AdminPermissionsTable;
  latchkey_mail_outbox: MailOutboxTable;
}

export function toBooleanColumn(value: boolean): number {
  return value ? 1 : 0;
}

export function toInstantColumn(value: Date): string {
  return value.toISOString();
}

export function fromInstantColumn(value: string | Date): Date {
  return new Date(value);
}

/**
 * A JSON column holding an object, read back. A row whose text is not a JSON object (written by
 * hand, or cut short) reads as {} rather than failing every read of the row.
 */
export function fromJsonObjectColumn(value: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
