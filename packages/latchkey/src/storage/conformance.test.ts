/**
 * The storage conformance suite: one set of expectations for every repository, run on SQLite
 * always and on PostgreSQL when TEST_DATABASE_URL is set, for both username types. The cases live
 * in conformance/; this file only decides where they run.
 */
import { describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../testing/database.js';
import { describeEmailAddressRepository } from './conformance/email-addresses.js';
import { describeMigrations } from './conformance/migrations.js';
import { describeSessionRepository } from './conformance/sessions.js';
import { describeStoreTransactions } from './conformance/transactions.js';
import { describeUserRepository } from './conformance/users.js';
import type { UsernameType } from './ports.js';

const kinds = testDatabaseKinds();
const runningInCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

if (!kinds.includes('postgres')) {
  if (runningInCi) {
    // In CI nothing may be skipped silently: a missing database must fail the run.
    it('runs the storage conformance suite on PostgreSQL in CI', () => {
      expect.fail('CI is set but TEST_DATABASE_URL is not: the PostgreSQL part of the storage conformance suite cannot run.');
    });
  } else {
    console.log('Storage conformance: PostgreSQL part left out (set TEST_DATABASE_URL=postgres://... to run it).');
  }
}

for (const kind of kinds) {
  for (const usernameType of ['username', 'email'] satisfies UsernameType[]) {
    describe(`storage on ${kind}, usernameType '${usernameType}'`, () => {
      const target = { kind, usernameType };
      describeUserRepository(target);
      describeEmailAddressRepository(target);
      describeSessionRepository(target);
      describeStoreTransactions(target);
      describeMigrations(target);
    });
  }
}
