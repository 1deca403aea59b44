import { parseArgs } from 'node:util';
import { validatePasswordStrength, createUser, setUserPassword } from '../account/users.js';
import { findUserByLogin } from '../account/credentials.js';
import { validateEmail, validateUsername } from '../core/identifiers.js';
import type { Settings } from '../config/settings.js';
import { isLatchkeyError } from '../core/errors.js';
import { createLatchkey, type Latchkey } from '../latchkey.js';
import { openDatabase } from '../storage/database.js';
import { createDatabaseOneTimeClaimStore } from '../storage/kysely/one-time-claim-store.js';
import { createDatabaseCounterStore } from '../storage/kysely/counter-store.js';
import { deleteApiToken, issueApiToken } from '../tokens/api-tokens.js';
import type { ClientInfo } from '../core/client.js';
import type { User } from '../account/model.js';
import { findDeploymentProblems, formatProblems } from './check.js';
import { CommandError, Prompter, type CommandIO } from './io.js';

export interface CommandContext {
  settings: Settings;
  io: CommandIO;
  args: string[];
}

async function withLatchkey<T>(settings: Settings, work: (latchkey: Latchkey) => Promise<T>): Promise<T> {
  const latchkey = await createLatchkey({ settings, migrations: 'require' });
  try {
    return await work(latchkey);
  } finally {
    await latchkey.close();
  }
}

export async function migrate({ settings, io }: CommandContext): Promise<number> {
  const database = await openDatabase({ url: settings.DATABASE_URL, usernameType: settings.USERNAME_TYPE });
  try {
    const applied = await database.migrate();
    if (applied.length === 0) io.stdout.write('No migrations to apply.\n');
    for (const name of applied) io.stdout.write(`Applied ${name}.\n`);
  } finally {
    await database.close();
  }
  return 0;
}

export async function createsuperuser({ settings, io, args }: CommandContext): Promise<number> {
  const { values } = parseArgs({ args, options: { username: { type: 'string' }, email: { type: 'string' }, noinput: { type: 'boolean' } } });
  const byEmail = settings.USERNAME_TYPE === 'email';
  if (byEmail && values.username !== undefined) throw new CommandError('This project has no usernames: give --email only.');
  const interactive = !values.noinput;
  if (interactive && io.stdin.isTTY !== true) {
    throw new CommandError('createsuperuser needs a terminal; without one, use --noinput with LATCHKEY_SUPERUSER_PASSWORD.');
  }
  return withLatchkey(settings, async (latchkey) => {
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

export async function changepassword({ settings, io, args }: CommandContext): Promise<number> {
  const login = args[0];
  if (!login) throw new CommandError('Usage: changepassword <login>');
  return withLatchkey(settings, async (latchkey) => {
    const user = await findUserByLogin(latchkey.deps, login);
    if (!user) throw new CommandError(`User "${login}" does not exist.`);
    io.stdout.write(`Changing password for user "${user.username ?? user.email}"\n`);
    const prompter = new Prompter(io);
    try {
      const password = await askNewPassword(prompter, io, settings, { username: user.username, email: user.email, name: user.name });
      await setUserPassword(latchkey.deps, user, password);
    } finally {
      prompter.close();
    }
    io.stdout.write(`Password changed successfully for user "${user.username ?? user.email}". Their sessions have ended.\n`);
    return 0;
  });
}

export async function clearsessions({ settings, io }: CommandContext): Promise<number> {
  const [removed, counters, claims] = await withLatchkey(settings, async (latchkey) => [
    await latchkey.deps.sessions.deleteExpired(),
    // Rate-limit counters and one-time claims kept in the database expire in place, and stay until
    // removed here; Redis drops its own.
    await createDatabaseCounterStore(latchkey.database.kysely).deleteExpired(latchkey.deps.clock.now()),
    await createDatabaseOneTimeClaimStore(latchkey.database.kysely).deleteExpired(latchkey.deps.clock.now()),
  ]);
  io.stdout.write(`Removed ${removed} expired session(s), ${counters} expired rate-limit counter(s) and ${claims} expired one-time claim(s).\n`);
  return 0;
}

/** Who made or deleted a token from the command line, for the audit trail. */
const MANAGEMENT_CLIENT: ClientInfo = { ip: '', userAgent: 'latchkey management command' };

/** The one user a token command names, found the way a login finds it (as changepassword does). */
async function userNamed(latchkey: Latchkey, login: string): Promise<User> {
  const user = await findUserByLogin(latchkey.deps, login);
  if (!user) throw new CommandError(`User "${login}" does not exist.`);
  return user;
}

function loginArgument(args: string[], usage: string, options: { reset?: { type: 'boolean' } } = {}): { login: string; reset: boolean } {
  const { values, positionals } = parseArgs({ args, options, allowPositionals: true });
  const [login, ...extra] = positionals;
  if (login === undefined || login.trim() === '' || extra.length > 0) throw new CommandError(`Usage: ${usage}`);
  return { login, reset: values.reset === true };
}

/**
 * Prints the user's API token key, creating the token if they have none (DRF's drf_create_token):
 * the same key as POST /api/auth-token/ gives, so a script can fetch it. Only the key goes to
 * standard output, so that `KEY=$(manage create-token alice)` captures exactly it. `--reset`
 * deletes the token first, for a key that has leaked: the old key stops working at once.
 */
export async function createToken({ settings, io, args }: CommandContext): Promise<number> {
  const { login, reset } = loginArgument(args, 'create-token [--reset] <login>', { reset: { type: 'boolean' } });
  return withLatchkey(settings, async (latchkey) => {
    const user = await userNamed(latchkey, login);
    if (reset) await deleteApiToken(latchkey.deps, user, MANAGEMENT_CLIENT);
    const key = await issueApiToken(latchkey.deps, user, MANAGEMENT_CLIENT);
    if (!user.isActive) io.stderr.write(`Warning: user "${user.username ?? user.email}" is inactive: the token is refused until the account is active again.\n`);
    io.stdout.write(`${key}\n`);
    return 0;
  });
}

/** Deletes the user's API token: every copy of its key stops working at once, on every instance. */
export async function deleteToken({ settings, io, args }: CommandContext): Promise<number> {
  const { login } = loginArgument(args, 'delete-token <login>');
  return withLatchkey(settings, async (latchkey) => {
    const user = await userNamed(latchkey, login);
    const deleted = await deleteApiToken(latchkey.deps, user, MANAGEMENT_CLIENT);
    io.stdout.write(deleted ? 'Token deleted.\n' : `User "${user.username ?? user.email}" has no token.\n`);
    return 0;
  });
}

export async function check({ settings, io, args }: CommandContext): Promise<number> {
  const { values } = parseArgs({ args, options: { deploy: { type: 'boolean' } } });
  // Opening Latchkey proves the database is reachable and fully migrated.
  await withLatchkey(settings, () => Promise.resolve());
  const problems = values.deploy ? findDeploymentProblems(settings) : [];
  io.stdout.write(formatProblems(problems));
  return problems.length === 0 ? 0 : 1;
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

async function askNewPassword(
  prompter: Prompter,
  io: CommandIO,
  settings: Settings,
  context: { username: string | null; email: string; name?: string },
): Promise<string> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const password = await prompter.ask('Password: ', { secret: true });
    const again = await prompter.ask('Password (again): ', { secret: true });
    if (password !== again) {
      io.stderr.write("Error: Your passwords didn't match.\n");
      continue;
    }
    try {
      validatePasswordStrength(settings, password, context);
      return password;
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      io.stderr.write(`Error: ${error.message}\n`);
    }
  }
  throw new CommandError('Aborting: no acceptable password after 3 attempts.');
}
