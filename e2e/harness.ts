/**
 * What the browser journeys use: the example site as a real process with a real SMTP server
 * (harness/site.ts), on SQLite or on a PostgreSQL database of its own (harness/postgres.ts), and
 * Chromium with helpers for forms, screenshots and console errors (harness/browser.ts).
 */
export {
  linkFromEmail,
  startSite,
  type ReceivedEmail,
  type RunningSite,
  type StartSiteOptions,
  type TestSmtpServer,
  type TestSmtpServerOptions,
  type UsernameType,
} from './harness/site.js';
export { deployedDatabase, siteDatabases, type SiteDatabase } from './harness/postgres.js';
export {
  browserTestsEnabled,
  chromiumAvailable,
  chromiumPath,
  expectNoConsoleErrors,
  fillForm,
  formWithButton,
  launchBrowser,
  newPage,
  screenshot,
  submit,
  watchConsole,
} from './harness/browser.js';
