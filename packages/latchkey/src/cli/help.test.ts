/**
 * `manage help` and `manage <command> --help`, for every command in the table (a new command is
 * covered without a line here), and the one-line refusal of a command line the command does not
 * accept. None of it needs settings: the environment below is production without its required
 * variables, which would stop any command that loaded them.
 */
import { describe, expect, it } from 'vitest';
import type { ProjectSettings } from '../config/load.js';
import { runAsPerson } from '../testing/terminal.js';
import { isCommandGroup, type Command } from './declaration.js';
import { COMMANDS } from './commands/index.js';

const project: ProjectSettings = { USERNAME_TYPE: 'username', SITE_NAME: 'CLI Test', DOMAIN_NAME: 'cli.example' };

function manage(argv: string[]) {
  return runAsPerson(argv, project, { cwd: '/nonexistent', env: { NODE_ENV: 'production' } });
}

/** Every command a person can run, by the words that name it: `migrate`, `socialapp add`, ... */
const RUNNABLE: [string, Command][] = Object.entries(COMMANDS).flatMap(([name, command]): [string, Command][] =>
  isCommandGroup(command) ? Object.entries(command.actions).map(([action, leaf]): [string, Command] => [`${name} ${action}`, leaf]) : [[name, command]],
);

describe('manage help', () => {
  it('lists every command with its one-line summary, on standard output, with status 0', async () => {
    for (const argv of [['help'], ['--help'], ['-h']]) {
      const result = await manage(argv);
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out).toMatch(/^Usage: manage <command> \[options\]\n/);
      for (const [name, command] of Object.entries(COMMANDS)) expect(result.out).toMatch(new RegExp(`\\n  ${name} +${command.summary.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }
  });

  it('describes a command of several actions by its actions, each with its summary', async () => {
    for (const [name, group] of Object.entries(COMMANDS)) {
      if (!isCommandGroup(group)) continue;
      const result = await manage([name, '--help']);
      expect(result).toMatchObject({ code: 0, err: '' });
      expect(result.out.split('\n')[0]).toBe(`Usage: manage ${name} <action> [options]`);
      for (const action of Object.keys(group.actions)) expect(result.out).toContain(`\n  ${action}  `);
      expect(result.out).toContain(`Run "${name} <action> --help" for an action's usage.`);
    }
  });

  it('without a command, prints the list and fails', async () => {
    const result = await manage([]);
    expect(result.code).toBe(1);
    expect(result.out).toContain('Commands:');
  });

  it('refuses an unknown command in one line that says where the list is', async () => {
    expect(await manage(['frobnicate'])).toEqual({ code: 1, out: '', err: 'Error: Unknown command "frobnicate". Run "help" for the list of commands.\n' });
    expect(await manage(['help', 'frobnicate'])).toEqual({ code: 1, out: '', err: 'Error: No command "frobnicate" to describe. Run "help" for the list of commands.\n' });
  });

  it("takes the names every object has (toString, constructor) for no command, and no action", async () => {
    for (const name of ['toString', 'constructor', '__proto__']) {
      expect(await manage([name]), name).toEqual({ code: 1, out: '', err: `Error: Unknown command "${name}". Run "help" for the list of commands.\n` });
      expect(await manage(['help', name]), name).toMatchObject({ code: 1, out: '' });
    }
    const action = await manage(['socialapp', 'toString']);
    expect(action.code).toBe(1);
    expect(action.err).toMatch(/^Error: Unknown action "toString" of socialapp \(.*\)\. Run "socialapp --help" for its usage\.\n$/);
  });
});

describe.each(RUNNABLE)('manage %s --help', (name, command) => {
  const words = name.split(' ');

  it('prints the usage, every argument and option with its meaning, with status 0', async () => {
    const result = await manage([...words, '--help']);
    expect(result).toMatchObject({ code: 0, err: '' });
    const usage = [`manage ${name}`, ...(command.options ? ['[options]'] : []), ...(command.arguments ?? []).map((argument) => `<${argument.name}>`)].join(' ');
    expect(result.out.split('\n')[0]).toBe(`Usage: ${usage}`);
    for (const argument of command.arguments ?? []) expect(result.out).toMatch(new RegExp(`\\n  <${argument.name}> +\\S`));
    for (const [option, declaration] of Object.entries(command.options ?? {})) {
      const label = declaration.type === 'string' ? `--${option} ${declaration.value ?? 'VALUE'}` : `--${option}`;
      // The label, then its meaning on the same line or, for a long label, the next.
      expect(result.out).toMatch(new RegExp(`\\n  ${label}(  +| *\\n {6,})\\w`));
    }
    for (const variable of Object.keys(command.environment ?? {})) expect(result.out).toContain(`\n  ${variable}`);
    expect(result.out).toContain('\n  -h, --help');
    // It fits a terminal.
    for (const line of result.out.split('\n')) expect(line.length).toBeLessThanOrEqual(79);
  });

  it('answers -h and `help <command>` with the same text', async () => {
    const help = (await manage([...words, '--help'])).out;
    expect(await manage([...words, '-h'])).toEqual({ code: 0, out: help, err: '' });
    expect(await manage(['help', ...words])).toEqual({ code: 0, out: help, err: '' });
  });

  it('refuses an unknown option in one line that points to the help, before loading any settings', async () => {
    expect(await manage([...words, '--bogus'])).toEqual({ code: 1, out: '', err: `Error: Unknown option '--bogus'. Run "${name} --help" for its usage.\n` });
  });
});

describe('a command line the declaration does not allow', () => {
  it('is refused in one line naming what is wrong', async () => {
    const hint = (name: string) => `Run "${name} --help" for its usage.\n`;
    expect((await manage(['createsuperuser', '--username'])).err).toBe(`Error: Option '--username' needs a value (--username U). ${hint('createsuperuser')}`);
    expect((await manage(['createsuperuser', '--username', '--noinput'])).err).toBe(`Error: Option '--username' needs a value (--username U). ${hint('createsuperuser')}`);
    expect((await manage(['createsuperuser', '--noinput=yes'])).err).toBe(`Error: Option '--noinput' takes no value. ${hint('createsuperuser')}`);
    expect((await manage(['changepassword'])).err).toBe(`Error: changepassword needs <login>. ${hint('changepassword')}`);
    expect((await manage(['delete-token', 'alice', 'bob'])).err).toBe(`Error: Unexpected argument 'bob'. ${hint('delete-token')}`);
    expect((await manage(['migrate', 'now'])).err).toBe(`Error: Unexpected argument 'now'. ${hint('migrate')}`);
    expect((await manage(['socialapp'])).err).toBe(`Error: socialapp needs an action: list, add, remove. ${hint('socialapp')}`);
    expect((await manage(['socialapp', 'frobnicate'])).err).toBe(`Error: Unknown action "frobnicate" of socialapp (list, add, remove). ${hint('socialapp')}`);
  });

  it('takes `--` as the end of the options, so an argument may start with a dash', async () => {
    // Accepted as the login, then refused only by the production settings this test leaves out.
    const result = await manage(['delete-token', '--', '--alice']);
    expect(result.err).toMatch(/^Error: Production needs these environment variables/);
  });
});
