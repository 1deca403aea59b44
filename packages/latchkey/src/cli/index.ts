import { loadSettings, type ProjectSettings } from '../config/load.js';
import { isLatchkeyError } from '../core/errors.js';
import type { ManagementOptions } from './command.js';
import { COMMANDS } from './commands/index.js';
import { CommandError, type CommandIO } from './io.js';

export { CommandError, type CommandIO } from './io.js';
export type { ManagementOptions } from './command.js';

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(16)} ${command.help}`);
  return `Usage: manage <command> [options]\n\nCommands:\n${lines.join('\n')}\n`;
}

/**
 * The management CLI (`npm run manage -- <command>`), as Django's manage.py: every failure a
 * person can cause (bad settings, unreachable database, duplicate user, weak password) ends with
 * one "Error: ..." line and status 1, never a stack trace.
 */
export async function runManagementCommand(
  argv: string[],
  project: ProjectSettings,
  io: CommandIO,
  options: ManagementOptions = {},
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.stdout.write(usage());
    return name === undefined ? 1 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr.write(`Error: Unknown command "${name}".\n${usage()}`);
    return 1;
  }
  try {
    const settings = loadSettings(project, { env: io.env, cwd: io.cwd });
    return await command.run({ settings, options, io, args });
  } catch (error) {
    // parseArgs reports an unknown or malformed option as a TypeError with an ERR_PARSE_ARGS code.
    const badOption = error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
    if (error instanceof CommandError || isLatchkeyError(error) || badOption) {
      io.stderr.write(`Error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

/**
 * For a project's manage script: runs the command against the real process and exits. A project
 * that gives createLatchkey provider kinds of its own passes the same ones here.
 */
export async function runManagementCli(
  project: ProjectSettings,
  options: ManagementOptions = {},
  argv = process.argv.slice(2),
): Promise<never> {
  const code = await runManagementCommand(argv, project, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  }, options);
  process.exit(code);
}
