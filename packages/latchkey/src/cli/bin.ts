import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ProjectSettings } from '../config/load.js';
import { runManagementCli } from './index.js';

const DEFAULT_SETTINGS_MODULE = 'src/config/settings.ts';

function isProjectSettings(value: unknown): value is ProjectSettings {
  return typeof value === 'object' && value !== null && 'USERNAME_TYPE' in value && 'SITE_NAME' in value;
}

/**
 * The `latchkey` binary: finds the project's settings module (`--settings`, default
 * src/config/settings.ts), takes its `projectSettings` (or default) export, and runs the command.
 */
export async function runFromCommandLine(argv: string[]): Promise<never> {
  let settingsModule = DEFAULT_SETTINGS_MODULE;
  const rest = [...argv];
  // Only before the command's name: after it, `--settings` is the command's own (socialapp add has one).
  const flag = rest[0];
  if (flag === '--settings' || flag?.startsWith('--settings=')) {
    const inline = flag.startsWith('--settings=') ? flag.slice('--settings='.length) : undefined;
    settingsModule = inline ?? rest[1] ?? '';
    rest.splice(0, inline === undefined ? 2 : 1);
  }
  let project: unknown;
  try {
    const loaded = (await import(pathToFileURL(resolve(settingsModule)).href)) as { projectSettings?: unknown; default?: unknown };
    project = loaded.projectSettings ?? loaded.default;
  } catch (error) {
    process.stderr.write(`Error: cannot load the settings module ${settingsModule}: ${(error as Error).message.split('\n')[0]}\n`);
    process.exit(1);
  }
  if (!isProjectSettings(project)) {
    process.stderr.write(`Error: ${settingsModule} exports no projectSettings (an object with USERNAME_TYPE and SITE_NAME).\n`);
    process.exit(1);
  }
  return runManagementCli(project, {}, rest);
}
