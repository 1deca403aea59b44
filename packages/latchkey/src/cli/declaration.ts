// What a management command declares of itself (commands/<name>.ts): what `help` says of it, its
// options and arguments, and where its work is. This module and the declarations import nothing
// that does work, so that `manage help`, `<command> --help` and a mistyped option answer without
// loading the library behind the commands: a second or more, before any command ran.
import type { CommandLineDeclaration, ParsedArguments } from './arguments.js';
import type { CommandContext } from './command.js';

/** What `manage help` and `manage <command> --help` say of a command, besides its command line. */
interface CommandDescription {
  /** One line for `manage help`: a phrase, without a final full stop. */
  summary: string;
  /** Sentences under the usage line of its help. */
  description: string;
}

/**
 * A command: its command line, declared once (arguments.ts parses it and help.ts describes it),
 * and what it does with it. The settings are loaded only once the command line is accepted, so
 * `--help` and a mistyped option need no settings or database.
 */
export interface Command extends CommandDescription, CommandLineDeclaration {
  /** Environment variables the command reads that are not settings, for its help. */
  environment?: Readonly<Record<string, string>>;
  run(context: CommandContext, parsed: ParsedArguments): Promise<number>;
}

/** A command whose first argument names one of its actions (`socialapp list`), each a command of its own. */
export interface CommandGroup extends CommandDescription {
  actions: Readonly<Record<string, Command>>;
  /** Refuses a command line before any parsing, with a message of the group's own (even before `--help`). */
  screen?: (args: readonly string[]) => void;
}

export type ManagementCommand = Command | CommandGroup;

export function isCommandGroup(command: ManagementCommand): command is CommandGroup {
  return 'actions' in command;
}

/**
 * A command's `run`, from the module that does its work (commands/<name>.run.ts), loaded only when
 * the command runs.
 */
export function runFrom(load: () => Promise<{ run: Command['run'] }>): Command['run'] {
  return async (context, parsed) => (await load()).run(context, parsed);
}

/** The `<login>` of changepassword, create-token and delete-token: a user found as a login finds them. */
export const LOGIN_ARGUMENT = {
  name: 'login',
  help: "the user's username, or their email address where people log in with it (as ACCOUNT_LOGIN_METHODS allows)",
} as const;
