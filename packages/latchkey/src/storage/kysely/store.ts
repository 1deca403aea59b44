import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely } from 'kysely';
import type { Repositories, Store } from '../../store.js';
import type { DatabaseDialect, Executor } from './dialect.js';
import { createAdminPermissionRepository } from './admin-permissions.js';
import { createApiTokenRepository } from './api-tokens.js';
import { createAuditLogRepository } from './audit-log.js';
import { createAuthenticatorRepository } from './authenticators.js';
import { createEmailAddressRepository } from './email-addresses.js';
import { createMailOutboxRepository } from './mail-outbox.js';
import { createSessionRepository } from './sessions.js';
import { createSocialAccountRepository } from './social-accounts.js';
import { createSocialAppRepository } from './social-apps.js';
import { createSocialTokenRepository } from './social-tokens.js';
import { createUserRepository } from './users.js';
import { executorCredentialReads, type CredentialReads } from './credential-reads.js';
import type { UserShape } from './user-field-columns.js';

function createRepositories(db: Executor, dialect: DatabaseDialect, shape: UserShape, credentialReads: CredentialReads): Repositories {
  const context = { db, dialect, usernameType: shape.usernameType, userFields: shape.userFields, credentialReads };
  return {
    users: createUserRepository(context),
    emailAddresses: createEmailAddressRepository(context),
    sessions: createSessionRepository(context),
    auditLog: createAuditLogRepository(context),
    authenticators: createAuthenticatorRepository(context),
    apiTokens: createApiTokenRepository(context),
    socialApps: createSocialAppRepository(context),
    socialAccounts: createSocialAccountRepository(context),
    socialTokens: createSocialTokenRepository(context),
    adminPermissions: createAdminPermissionRepository(context),
    mailOutbox: createMailOutboxRepository(context),
    // Typed by the project (`withTables<Tables>()`): it knows its tables, Latchkey does not.
    projectDatabase: db as unknown as Kysely<object>,
  };
}

/** The transaction whose work is running in the current async context; `open` turns false when the work settles. */
interface OpenWork {
  open: boolean;
}

function misuse(call: string): Error {
  const what = call === 'transaction' ? 'transactions do not nest' : 'the store works outside the transaction (on SQLite it would wait for it to end, forever)';
  return new Error(`store.${call}() was called from inside the work of Store.transaction(): ${what}; use the repositories passed to transaction() instead.`);
}

/** A copy of `repository` whose every method first asks `check` whether it may run. */
function guarded<R extends object>(name: string, repository: R, check: (call: string) => void): R {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(repository)) {
    copy[key] =
      typeof value === 'function'
        ? async (...args: unknown[]): Promise<unknown> => {
            check(`${name}.${key}`);
            return (value as (...args: unknown[]) => Promise<unknown>).apply(repository, args);
          }
        : value;
  }
  return copy as R;
}

/** How the credential reads name their one parameter on each database. */
function parameterOf(dialect: DatabaseDialect): '?' | '$1' {
  return dialect === 'sqlite' ? '?' : '$1';
}

/**
 * The Kysely implementation of the storage ports, for SQLite and PostgreSQL alike. `credentialReads`
 * runs the reads of every authenticated request on the driver itself (storage/database.ts makes
 * them); without it they go through Kysely.
 */
export function createKyselyStore(db: Executor, dialect: DatabaseDialect, shape: UserShape, credentialReads?: CredentialReads): Store {
  // The work must use the repositories it is handed. A call through this store instead would run
  // outside the transaction: on PostgreSQL on another connection (not atomic with the work, and
  // blocked by its row locks), on SQLite behind the one connection the transaction holds, forever.
  // So such a call fails at once, alike on both, wherever it comes from within the work.
  const openWork = new AsyncLocalStorage<OpenWork>();
  const check = (call: string): void => {
    if (openWork.getStore()?.open === true) throw misuse(call);
  };
  const outer = createRepositories(db, dialect, shape, credentialReads ?? executorCredentialReads(db, shape, parameterOf(dialect)));
  return {
    users: guarded('users', outer.users, check),
    emailAddresses: guarded('emailAddresses', outer.emailAddresses, check),
    sessions: guarded('sessions', outer.sessions, check),
    auditLog: guarded('auditLog', outer.auditLog, check),
    authenticators: guarded('authenticators', outer.authenticators, check),
    apiTokens: guarded('apiTokens', outer.apiTokens, check),
    socialApps: guarded('socialApps', outer.socialApps, check),
    socialAccounts: guarded('socialAccounts', outer.socialAccounts, check),
    socialTokens: guarded('socialTokens', outer.socialTokens, check),
    adminPermissions: guarded('adminPermissions', outer.adminPermissions, check),
    mailOutbox: guarded('mailOutbox', outer.mailOutbox, check),
    projectDatabase: outer.projectDatabase,
    async transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T> {
      check('transaction');
      // Kysely commits when the callback resolves and rolls back when it throws. A task the work
      // starts and leaves running keeps this context; once the work has settled it may use the store.
      return db.transaction().execute(async (trx) => {
        const state: OpenWork = { open: true };
        try {
          return await openWork.run(state, () => work(createRepositories(trx, dialect, shape, executorCredentialReads(trx, shape, parameterOf(dialect)))));
        } finally {
          state.open = false;
        }
      });
    },
  };
}
