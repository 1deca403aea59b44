import { loadSettings, type ProjectSettings } from '../config/load.js';
import { isLatchkeyError } from '../core/errors.js';
import { helpHint, isHelpOption, parseCommandLine, type ParsedArguments } from './arguments.js';
import type { ManagementOptions } from './command.js';
import { isCommandGroup, type Command, type ManagementCommand } from './declaration.js';
import { COMMANDS } from './commands/index.js';
import { commandList, helpFor } from './help.js';
import { CommandError, type CommandIO } from './io.js';

export { CommandError, type CommandIO } from './io.js';
export type { ManagementOptions } from './command.js';

/** What a command line asks for: a help text, or a command to run with its parsed arguments. */
type Invocation = { help: string } | { command: Command; parsed: ParsedArguments };

/**
 * Reads the command line after the command's name, before any settings are loaded: `--help`
 * needs none, and a mistyped option is refused before anything happens.
 */
function invocationOf(name: string, command: ManagementCommand, args: readonly string[]): Invocation {
  if (!isCommandGroup(command)) {
    const parsed = parseCommandLine(name, command, args);
    return parsed === 'help' ? { help: helpFor(name, command) } : { command, parsed };
  }
  command.screen?.(args);
  const [action, ...rest] = args;
  if (action !== undefined && isHelpOption(action)) return { help: helpFor(name, command) };
  const choices = Object.keys(command.actions);
  if (action === undefined) throw new CommandError(`${name} needs an action: ${choices.join(', ')}. ${helpHint(name)}`);
  const chosen = Object.hasOwn(command.actions, action) ? command.actions[action] : undefined;
  if (chosen === undefined) throw new CommandError(`Unknown action "${action}" of ${name} (${choices.join(', ')}). ${helpHint(name)}`);
  return invocationOf(`${name} ${action}`, chosen, rest);
}

/** `help`, `help <command>` and `help <command> <action>`: the list of commands, or one command's help. */
function helpTopic(words: readonly string[]): string | undefined {
  let name = '';
  let topic: ManagementCommand | undefined;
  let commands: Readonly<Record<string, ManagementCommand>> = COMMANDS;
  for (const word of words) {
    topic = Object.hasOwn(commands, word) ? commands[word] : undefined;
    if (topic === undefined) return undefined;
    name = name === '' ? word : `${name} ${word}`;
    commands = isCommandGroup(topic) ? topic.actions : {};
  }
  return topic === undefined ? commandList(COMMANDS) : helpFor(name, topic);
}

/**
 * The management CLI (`npm run manage -- <command>`), as Django's manage.py: every failure a
 * person can cause (a mistyped option, bad settings, unreachable database, duplicate user, weak
 * password) ends with one "Error: ..." line and status 1, never a stack trace. `help` and
 * `<command> --help` print to standard output and end with status 0.
 */
export async function runManagementCommand(
  argv: string[],
  project: ProjectSettings,
  io: CommandIO,
  options: ManagementOptions = {},
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    io.stdout.write(commandList(COMMANDS));
    return 1;
  }
  if (name === 'help' || isHelpOption(name)) {
    const help = helpTopic(args);
    if (help === undefined) {
      io.stderr.write(`Error: No command "${args.join(' ')}" to describe. Run "help" for the list of commands.\n`);
      return 1;
    }
    io.stdout.write(help);
    return 0;
  }
  // Own names only: `toString` or `constructor` is no command.
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.stderr.write(`Error: Unknown command "${name}". Run "help" for the list of commands.\n`);
    return 1;
  }
  try {
    const invocation = invocationOf(name, command, args);
    if ('help' in invocation) {
      io.stdout.write(invocation.help);
      return 0;
    }
    const settings = loadSettings(project, { env: io.env, cwd: io.cwd });
    return await invocation.command.run({ settings, options, io }, invocation.parsed);
  } catch (error) {
    if (error instanceof CommandError || isLatchkeyError(error)) {
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
