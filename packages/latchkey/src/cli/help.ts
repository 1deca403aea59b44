// The help texts (`manage help`, `manage <command> --help`), written from the commands'
// declarations (command.ts, arguments.ts): what the parser accepts is exactly what the help lists.
import type { OptionDeclaration } from './arguments.js';
import { isCommandGroup, type Command, type CommandGroup, type ManagementCommand } from './declaration.js';

/** The name the usage lines give the program: `npm run manage --` or `latchkey` run it. */
const PROGRAM = 'manage';
/** Lines are wrapped to a terminal's usual width. */
const WIDTH = 79;
type Row = readonly [label: string, text: string];
const HELP_ROW: Row = ['-h, --help', 'show this help and exit'];
/** A longer label has its text on the next line, as argparse does. */
const MAX_LABEL_WIDTH = 24;

/** Words wrapped to `width` columns, every line after the first indented by `indent`. */
function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((part) => part !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.join(`\n${indent}`);
}

/** The width of the first column, the same for every section of a help: the longest label that fits. */
function labelWidthOf(rows: readonly Row[]): number {
  return Math.max(0, ...rows.map(([label]) => label.length).filter((length) => length <= MAX_LABEL_WIDTH));
}

/** Two columns, the second wrapped beside the first: a heading's rows. */
function section(heading: string, rows: readonly Row[], labelWidth = labelWidthOf(rows)): string {
  const indent = ' '.repeat(2 + labelWidth + 2);
  const lines = rows.map(([label, text]) => {
    const start = label.length > labelWidth ? `  ${label}\n${indent}` : `  ${label.padEnd(labelWidth)}  `;
    return start + wrap(text, WIDTH - indent.length, indent);
  });
  return `${heading}:\n${lines.join('\n')}\n`;
}

function optionLabel(name: string, option: OptionDeclaration): string {
  return option.type === 'string' ? `--${name} ${option.value ?? 'VALUE'}` : `--${name}`;
}

/** `manage help`: every command with its one-line summary. */
export function commandList(commands: Readonly<Record<string, ManagementCommand>>): string {
  return [
    `Usage: ${PROGRAM} <command> [options]\n`,
    section('Commands', Object.entries(commands).map(([name, command]) => [name, command.summary])),
    `Run "<command> --help" for a command's usage, or "help <command>".\n`,
  ].join('\n');
}

function commandHelp(name: string, command: Command): string {
  const options = Object.entries(command.options ?? {});
  const positionals = command.arguments ?? [];
  const usage = [`${PROGRAM} ${name}`, ...(options.length > 0 ? ['[options]'] : []), ...positionals.map((argument) => `<${argument.name}>`)].join(' ');
  const sections: [string, Row[]][] = [
    ['Arguments', positionals.map((argument): Row => [`<${argument.name}>`, argument.help])],
    ['Options', [...options.map(([option, declaration]): Row => [optionLabel(option, declaration), declaration.help]), HELP_ROW]],
    ['Environment', Object.entries(command.environment ?? {})],
  ];
  const width = labelWidthOf(sections.flatMap(([, rows]) => rows));
  return [
    `Usage: ${usage}\n`,
    `${wrap(command.description, WIDTH, '')}\n`,
    ...sections.filter(([, rows]) => rows.length > 0).map(([heading, rows]) => section(heading, rows, width)),
  ].join('\n');
}

function groupHelp(name: string, group: CommandGroup): string {
  const actions = Object.entries(group.actions).map(([action, command]): Row => [action, command.summary]);
  const width = labelWidthOf([...actions, HELP_ROW]);
  return [
    `Usage: ${PROGRAM} ${name} <action> [options]\n`,
    `${wrap(group.description, WIDTH, '')}\n`,
    section('Actions', actions, width),
    section('Options', [HELP_ROW], width),
    `Run "${name} <action> --help" for an action's usage.\n`,
  ].join('\n');
}

/** `manage <command> --help`; `name` is the command's words (`socialapp add` for an action). */
export function helpFor(name: string, command: ManagementCommand): string {
  return isCommandGroup(command) ? groupHelp(name, command) : commandHelp(name, command);
}
