// The real SMTP server for tests is @latchkey/core/testing/smtp: it needs smtp-server and mailparser,
// which a project installs only if it tests its mail that way.
export { createTestDatabase, testDatabaseKinds } from './database.js';
export { testSettings, type ProjectTestLatchkey as TestLatchkey, type TestLatchkeyOptions } from './latchkey.js';
export type { ProjectMigration, ProjectMigrationContext, ProjectMigrations } from '../storage/migrations/project.js';
import { createTestLatchkey as createInternalTestLatchkey, type ProjectTestLatchkey, type TestLatchkeyOptions } from './latchkey.js';

/**
 * A complete Latchkey on a fresh database of its own, with a clock the test moves (`clock`) and a
 * mailer it reads (`mailer.outbox`): what a project's integration tests start from.
 */
export function createTestLatchkey(options: TestLatchkeyOptions = {}): Promise<ProjectTestLatchkey> {
  return createInternalTestLatchkey(options);
}
export { activateTotpFor, totpCodeAt, type ActivatedTotp } from './mfa.js';
export { ApiTestClient, createApiTestApp, registerTestApiViews } from './api.js';
