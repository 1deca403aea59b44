// What `manage createsuperuser` does (its command line is declared in createsuperuser.ts): asks at
// a terminal or, with --noinput, takes the password from LATCHKEY_SUPERUSER_PASSWORD.
import { createUser } from '../../account/users.js';
import { validateEmail, validateUsername } from '../../core/identifiers.js';
import { isLatchkeyError } from '../../core/errors.js';
import type { ParsedArguments } from '../arguments.js';
import { askNewPassword, withLatchkey, type CommandContext } from '../command.js';
import { CommandError, Prompter, type CommandIO } from '../io.js';
import { SUPERUSER_PASSWORD_VARIABLE } from './shared-names.js';

export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { settings, io } = context;
  const values = { username: parsed.string('username'), email: parsed.string('email'), noinput: parsed.flag('noinput') };
  const byEmail = settings.USERNAME_TYPE === 'email';
  if (byEmail && values.username !== undefined) throw new CommandError('This project has no usernames: give --email only.');
  const interactive = !values.noinput;
  if (interactive && io.stdin.isTTY !== true) {
    throw new CommandError(`createsuperuser needs a terminal; without one, use --noinput with ${SUPERUSER_PASSWORD_VARIABLE}.`);
  }
  return withLatchkey(context, async (latchkey) => {
    let username = values.username;
    let email = values.email ?? '';
    let password: string;
    if (!interactive) {
      if (!byEmail && !username) throw new CommandError('--username is required with --noinput.');
      if (byEmail && !email) throw new CommandError('--email is required with --noinput.');
      password = io.env[SUPERUSER_PASSWORD_VARIABLE] ?? '';
      if (password === '') throw new CommandError(`${SUPERUSER_PASSWORD_VARIABLE} must be set with --noinput.`);
    } else {
      const prompter = new Prompter(io);
      try {
        if (!byEmail) username = await askUntilValid(prompter, io, 'Username: ', username, validateUsername);
        email = await askUntilValid(prompter, io, byEmail ? 'Email address: ' : 'Email address (optional): ', values.email, (raw) =>
          raw === '' && !byEmail ? '' : validateEmail(raw),
        );
        password = await askNewPassword(prompter, io, settings, { username: username ?? null, email });
      } finally {
        prompter.close();
      }
    }
    // The superuser's email is stored as verified: the operator vouches for it.
    await createUser(latchkey.deps, {
      ...(byEmail ? {} : { username: username! }),
      email,
      password,
      isStaff: true,
      isSuperuser: true,
      emailVerified: true,
    });
    io.stdout.write('Superuser created successfully.\n');
    return 0;
  });
}

async function askUntilValid(
  prompter: Prompter,
  io: CommandIO,
  question: string,
  given: string | undefined,
  validate: (raw: string) => string,
): Promise<string> {
  let raw = given;
  for (;;) {
    raw ??= (await prompter.ask(question)).trim();
    try {
      return validate(raw);
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      io.stderr.write(`Error: ${error.message}\n`);
      raw = undefined;
    }
  }
}
