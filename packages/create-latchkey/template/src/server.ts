import { createLatchkey, isLatchkeyError, loadSettings, logDestination, loggerOptions, startupBanner } from '@latchkey/core';
import pino from 'pino';
import { buildApp, LOCALE_DIRS, TEMPLATE_DIRS } from './app.js';
import { loadLocalEnvironment } from './config/environment.js';
import { projectSettings } from './config/settings.js';
import { projectMigrations } from './migrations/index.js';
import { AccountAdapter, SocialAccountAdapter } from './users/adapters.js';
import { userFields } from './users/fields.js';

/**
 * `npm start` (production) and `npm run dev` (local): local mode migrates the database first; other modes refuse to start with pending
 * migrations. A bad setting or an unreachable database ends start-up with one clear line.
 */
const SHUTDOWN_GRACE_MS = 10_000;

/** The port is taken: said in one line that names the setting to change. */
class PortInUseError extends Error {
  constructor(host: string, port: number) {
    super(`Port ${port} on ${host} is already in use: stop what is listening there, or set PORT to another port.`);
  }
}

async function main(): Promise<void> {
  loadLocalEnvironment();
  const settings = loadSettings(projectSettings);
  // One log on stdout with Latchkey's redaction: the requests, and what Latchkey reports outside
  // them (Redis gone and back, a mail the outbox could not send). JSON lines for log services; in
  // local mode one readable line per request instead, between the mails the console prints.
  const log = pino(loggerOptions(settings), logDestination(settings));
  const latchkey = await createLatchkey({
    settings,
    adapter: new AccountAdapter(settings),
    socialAdapter: new SocialAccountAdapter(settings),
    templateDirs: TEMPLATE_DIRS,
    localeDirs: LOCALE_DIRS,
    migrations: settings.ENVIRONMENT === 'local' ? 'auto' : 'require',
    // The project's own tables and user fields' columns (src/migrations/), applied after Latchkey's.
    projectMigrations,
    // The project's own user fields (src/users/fields.ts): start-up refuses one without its column.
    userFields,
    log,
  });
  const app = await buildApp(latchkey, { loggerInstance: log });
  try {
    await app.listen({ port: settings.PORT, host: settings.HOST });
  } catch (error) {
    await app.close();
    // The usual first-hour mistake: another server (often this one, still running) has the port.
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(settings.HOST, settings.PORT);
    throw error;
  }
  // Where everything is, before the request lines start.
  if (settings.ENVIRONMENT === 'local') process.stdout.write(startupBanner(settings));

  // SIGTERM (and Ctrl-C): stop accepting connections, let in-flight requests finish, then close
  // the database (onClose in buildApp) and exit. A request that hangs cannot hold the process
  // past the grace period, and a second signal means "now".
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      app.log.warn(`${signal} received again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    app.log.info(`${signal} received: finishing in-flight requests`);
    setTimeout(() => {
      app.log.error(`requests still running after ${SHUTDOWN_GRACE_MS / 1000} s: exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  if (isLatchkeyError(error) || error instanceof PortInUseError) {
    process.stderr.write(`Error: ${error.message}\n`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
