export { startTestSmtpServer } from './smtp.js';
export { createTestDatabase, testDatabaseKinds } from './database.js';
export { createTestLatchkey, testSettings, type TestLatchkey, type TestLatchkeyOptions } from './latchkey.js';
export { activateTotpFor, totpCodeAt, type ActivatedTotp } from './mfa.js';
export { ApiTestClient, createApiTestApp, registerTestApiViews } from './api.js';
