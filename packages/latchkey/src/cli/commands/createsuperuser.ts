// `manage createsuperuser`, as Django's: creates a staff superuser, asking at a terminal or, with
// --noinput, taking the password from LATCHKEY_SUPERUSER_PASSWORD (for scripted deployments).
import { parseArgs } from 'node:util';
import { createUser } from '../../account/users.js';
import { validateEmail, validateUsername } from '../../core/identifiers.js';
import { isLatchkeyError } from '../../core/errors.js';
import { askNewPassword, withLatchkey, type CommandContext } from '../command.js';
import { CommandError, Prompter, type CommandIO } from '../io.js';

export async function createsuperuser(context: CommandContext): Promise<number> {
  const { settings, io, args } = context;
  const { values } = parseArgs({ args, options: { username: { type: 'string' }, email: { type: 'string' }, noinput: { type: 'boolean' } } });
  const byEmail = settings.USERNAME_TYPE === 'email';
  if (byEmail && values.username !== undefined) throw new CommandError('This project has no usernames: give --email only.');
  const interactive = !values.noinput;
  if (interactive && io.stdin.isTTY !== true) {
    throw new CommandError('createsuperuser needs a terminal; without one, use --noinput with LATCHKEY_SUPERUSER_PASSWORD.');
  }
  return withLatchkey(context, async (latchkey) => {
    let username = values.username;
    let email = values.email ?? '';
    let password: string;
    if (!interactive) {
      if (!byEmail && !username) throw new CommandError('--username is required with --noinput.');
      if (byEmail && !email) throw new CommandError('--email is required with --noinput.');
      password = io.env.LATCHKEY_SUPERUSER_PASSWORD ?? '';
      if (password === '') throw new CommandError('LATCHKEY_SUPERUSER_PASSWORD must be set with --noinput.');
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
