// A command's options and arguments, declared once: the parser below reads the declaration to
// accept or refuse a command line, and help.ts reads the same declaration to describe it, so that
// `manage <command> --help` cannot drift from what the command accepts.
import { parseArgs } from 'node:util';
import { CommandError } from './io.js';

export interface OptionDeclaration {
  /** A string option takes a value (`--username U` or `--username=U`); a boolean one does not. */
  type: 'string' | 'boolean';
  /** The value's placeholder in the help (`U` in `--username U`), for a string option. */
  value?: string;
  /** What the option does, for the help: a phrase, without a final full stop. */
  help: string;
}

export interface ArgumentDeclaration {
  /** Shown as `<name>` in the usage line and the errors. */
  name: string;
  help: string;
}

/** What a command line may hold: every argument declared is required, in this order. */
export interface CommandLineDeclaration {
  options?: Readonly<Record<string, OptionDeclaration>>;
  arguments?: readonly ArgumentDeclaration[];
}

/** `--help` and `-h`, which every command accepts and none declares. */
export function isHelpOption(arg: string): boolean {
  return arg === '--help' || arg === '-h';
}

/** The hint that ends every error about a command line: where to read what it accepts. */
export function helpHint(commandName: string): string {
  return `Run "${commandName} --help" for its usage.`;
}

/**
 * A command line read against its declaration. Asking for an option or an argument the command
 * did not declare is a programming error, thrown at once, so a misspelt name cannot read as
 * "not given".
 */
export class ParsedArguments {
  constructor(
    private readonly declaration: CommandLineDeclaration,
    private readonly values: ReadonlyMap<string, string | boolean>,
    private readonly positionals: readonly string[],
  ) {}

  /** The value of a string option, or undefined when it was not given. */
  string(name: string): string | undefined {
    this.requireOption(name, 'string');
    const value = this.values.get(name);
    return typeof value === 'string' ? value : undefined;
  }

  /** Whether a boolean option was given. */
  flag(name: string): boolean {
    this.requireOption(name, 'boolean');
    return this.values.get(name) === true;
  }

  /** A declared argument's value (every declared argument is required, so it is there). */
  argument(name: string): string {
    const index = (this.declaration.arguments ?? []).findIndex((argument) => argument.name === name);
    if (index === -1) throw new Error(`No argument <${name}> is declared.`);
    return this.positionals[index]!;
  }

  private requireOption(name: string, type: OptionDeclaration['type']): void {
    if (this.declaration.options?.[name]?.type !== type) throw new Error(`No ${type} option --${name} is declared.`);
  }
}

/**
 * Reads `args` against the declaration, or answers 'help' when `--help` or `-h` is among the
 * options. Anything the declaration does not allow (an unknown option, a missing value, a missing
 * or extra argument) is refused with one line that names it and points to the help.
 */
export function parseCommandLine(commandName: string, declaration: CommandLineDeclaration, args: readonly string[]): ParsedArguments | 'help' {
  const declared = declaration.options ?? {};
  // Lenient parsing gives every token, unknown options included, so that the refusals below are
  // ours (one line, with the hint) rather than node's.
  const { tokens } = parseArgs({
    args: [...args],
    options: { ...Object.fromEntries(Object.entries(declared).map(([name, option]) => [name, { type: option.type }])), help: { type: 'boolean', short: 'h' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  if (tokens.some((token) => token.kind === 'option' && token.name === 'help')) return 'help';
  const refuse = (problem: string): never => {
    throw new CommandError(`${problem} ${helpHint(commandName)}`);
  };
  const values = new Map<string, string | boolean>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const option = declared[token.name];
    if (option === undefined) return refuse(`Unknown option '${token.rawName}'.`);
    if (option.type === 'boolean') {
      if (token.value !== undefined) refuse(`Option '${token.rawName}' takes no value.`);
      values.set(token.name, true);
      continue;
    }
    // A value that looks like an option is more likely a forgotten value than a value: node's
    // strict parsing refuses it too, and `--name=-x` still gives one.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) {
      refuse(`Option '${token.rawName}' needs a value (${token.rawName} ${option.value ?? 'VALUE'}).`);
    }
    values.set(token.name, token.value!);
  }
  const expected = declaration.arguments ?? [];
  if (positionals.length < expected.length) {
    refuse(`${commandName} needs ${expected.slice(positionals.length).map((argument) => `<${argument.name}>`).join(' ')}.`);
  }
  if (positionals.length > expected.length) refuse(`Unexpected argument '${positionals[expected.length]!}'.`);
  return new ParsedArguments(declaration, values, positionals);
}
