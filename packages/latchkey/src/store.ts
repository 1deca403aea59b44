/**
 * The store: every feature's repositories (each feature owns its ports: account/ports.ts,
 * sessions/ports.ts, mfa/ports.ts, tokens/ports.ts, socialaccount/ports.ts, admin/ports.ts; the mail outbox's is mail/ports.ts) behind one object, and the transaction that
 * binds them all to one database transaction. storage/kysely/ implements it.
 */
import type { Kysely } from 'kysely';
import type { AdminPermissionRepository } from './admin/ports.js';
import type { AuditLogRepository, EmailAddressRepository, UserRepository } from './account/ports.js';
import type { MailOutboxRepository } from './mail/ports.js';
import type { AuthenticatorRepository } from './mfa/ports.js';
import type { SessionRepository } from './sessions/ports.js';
import type { SocialAccountRepository, SocialAppRepository, SocialTokenRepository } from './socialaccount/ports.js';
import type { ApiTokenRepository } from './tokens/ports.js';

/** The repositories, bound either to the database or to one open transaction. */
export interface Repositories {
  users: UserRepository;
  emailAddresses: EmailAddressRepository;
  sessions: SessionRepository;
  auditLog: AuditLogRepository;
  authenticators: AuthenticatorRepository;
  apiTokens: ApiTokenRepository;
  socialApps: SocialAppRepository;
  socialAccounts: SocialAccountRepository;
  socialTokens: SocialTokenRepository;
  adminPermissions: AdminPermissionRepository;
  /** Mail written with the change it tells of, sent after the commit (mail/ports.ts). */
  mailOutbox: MailOutboxRepository;
  /**
   * The same database for the project's own tables (docs/project-data.md): inside a transaction,
   * that transaction, so that the adapter's hooks write with the change they are called in.
   */
  projectDatabase: Kysely<object>;
}

export interface Store extends Repositories {
  /**
   * Runs `work` in one database transaction: it commits when `work` resolves and rolls back when
   * it throws, so a state change that spans rows is all or nothing. `work` must use only the
   * repositories it is handed: a call through the outer store, or a nested transaction(), from
   * inside `work` fails at once with an Error (on SQLite it would otherwise wait for the
   * transaction forever; on PostgreSQL it would run outside it). A refused write inside it (say 'email_taken') may be caught and
   * the transaction carried on, on PostgreSQL as on SQLite.
   */
  transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T>;
}
