// The real SMTP server for tests is @latchkey/core/testing/smtp: it needs smtp-server and mailparser,
// which a project installs only if it tests its mail that way.
export { createTestDatabase, testDatabaseKinds } from './database.js';
export { createTestLatchkey, testSettings, type TestLatchkey, type TestLatchkeyOptions } from './latchkey.js';
export { activateTotpFor, totpCodeAt, type ActivatedTotp } from './mfa.js';
export { ApiTestClient, createApiTestApp, registerTestApiViews } from './api.js';
