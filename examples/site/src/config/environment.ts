import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const LOCAL_ENVIRONMENT_FILE = fileURLToPath(new URL('../../.envs/local.env', import.meta.url));

/**
 * Outside production, reads .envs/local.env into the environment, so that the server and the
 * management commands share one secret key (a token made by `manage create-token` works on the
 * server). Variables already set win. Production never reads it: a missing production value must
 * stop start-up, not be filled in quietly with a local one.
 */
export function loadLocalEnvironment(): void {
  if (process.env.NODE_ENV === 'production' || !existsSync(LOCAL_ENVIRONMENT_FILE)) return;
  process.loadEnvFile(LOCAL_ENVIRONMENT_FILE);
}
