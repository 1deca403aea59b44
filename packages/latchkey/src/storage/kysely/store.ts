import type { Repositories, Store, UsernameType } from '../ports.js';
import type { DatabaseDialect, Executor } from './dialect.js';
import { createEmailAddressRepository } from './email-addresses.js';
import { createSessionRepository } from './sessions.js';
import { createUserRepository } from './users.js';

function createRepositories(db: Executor, dialect: DatabaseDialect, usernameType: UsernameType): Repositories {
  const context = { db, dialect, usernameType };
  return {
    users: createUserRepository(context),
    emailAddresses: createEmailAddressRepository(context),
    sessions: createSessionRepository(context),
  };
}

/** The Kysely implementation of the storage ports, for SQLite and PostgreSQL alike. */
export function createKyselyStore(db: Executor, dialect: DatabaseDialect, usernameType: UsernameType): Store {
  return {
    ...createRepositories(db, dialect, usernameType),
    async transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T> {
      // Kysely commits when the callback resolves and rolls back when it throws. The work must use
      // the repositories it is handed: on SQLite the one connection is held by the transaction
      // until it ends, so a call through the outer store would wait for it forever.
      return db.transaction().execute((trx) => work(createRepositories(trx, dialect, usernameType)));
    },
  };
}
