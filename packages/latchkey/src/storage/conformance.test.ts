/**
 * The storage conformance suite: one set of expectations for every repository, run on SQLite
 * always and on PostgreSQL when TEST_DATABASE_URL is set, for both username types. The cases live
 * in conformance/; this file only decides where they run.
 */
import { describe } from 'vitest';
import { testDatabaseKinds } from '../testing/database.js';
import { describeAdminPermissionRepository } from '../testing/conformance/admin-permissions.js';
import { describeApiTokenRepository } from '../testing/conformance/api-tokens.js';
import { describeAuditLogRepository } from '../testing/conformance/audit-log.js';
import { describeAuthenticatorRepository } from '../testing/conformance/authenticators.js';
import { describeEmailAddressRepository } from '../testing/conformance/email-addresses.js';
import { describeMailOutboxRepository } from '../testing/conformance/mail-outbox.js';
import { describeMigrations } from '../testing/conformance/migrations.js';
import { describeSessionRepository } from '../testing/conformance/sessions.js';
import { describeSocialAccountRepository } from '../testing/conformance/social-accounts.js';
import { describeSocialAppRepository } from '../testing/conformance/social-apps.js';
import { describeSocialTokenRepository } from '../testing/conformance/social-tokens.js';
import { describeStoreTransactions } from '../testing/conformance/transactions.js';
import { describeUserRepository } from '../testing/conformance/users.js';
import type { UsernameType } from '../config/settings.js';

// When TEST_DATABASE_URL is unset, vitest.global-setup.ts says in one line that the PostgreSQL
// part is left out (and fails the run under CI), once for the whole suite rather than per file.
const kinds = testDatabaseKinds();

for (const kind of kinds) {
  for (const usernameType of ['username', 'email'] satisfies UsernameType[]) {
    describe(`storage on ${kind}, usernameType '${usernameType}'`, () => {
      const target = { kind, usernameType };
      describeUserRepository(target);
      describeEmailAddressRepository(target);
      describeSessionRepository(target);
      describeAuditLogRepository(target);
      describeAuthenticatorRepository(target);
      describeApiTokenRepository(target);
      describeSocialAppRepository(target);
      describeSocialAccountRepository(target);
      describeSocialTokenRepository(target);
      describeAdminPermissionRepository(target);
      describeMailOutboxRepository(target);
      describeStoreTransactions(target);
      describeMigrations(target);
    });
  }
}
