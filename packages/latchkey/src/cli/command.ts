// What the management commands (commands/) share. A helper only one command uses stays in that
// command's file.
import { validatePasswordStrength } from '../account/users.js';
import { findUserByLogin } from '../account/credentials.js';
import type { Settings } from '../config/settings.js';
import { isLatchkeyError } from '../core/errors.js';
import type { ClientInfo } from '../core/client.js';
import type { User } from '../account/model.js';
import type { DjangoDecrypt } from '../django-import/convert.js';
import { openLatchkey, type CreateLatchkeyOptions, type InternalLatchkey } from '../latchkey.js';
import { CommandError, type Prompter, type CommandIO } from './io.js';

/**
 * What a project passes to its commands besides its settings: the code it gives createLatchkey in
 * its app (its own provider kinds), so that a command starts Latchkey as the site does and knows
 * every app the settings name.
 */
export type ManagementOptions = Pick<CreateLatchkeyOptions, 'socialProviderKinds' | 'projectMigrations' | 'userFields'> & {
  /**
   * For `import-django`, when the Django project overrode allauth.mfa's adapter `encrypt()` (its
   * TOTP secrets and recovery seeds are stored encrypted): the matching decrypt, from the stored
   * text to the clear one.
   */
  djangoDecrypt?: DjangoDecrypt;
};

export interface CommandContext {
  settings: Settings;
  options: ManagementOptions;
  io: CommandIO;
}

export async function withLatchkey<T>(context: CommandContext, work: (latchkey: InternalLatchkey) => Promise<T>): Promise<T> {
  const latchkey = await openLatchkey({ ...context.options, settings: context.settings, migrations: 'require' });
  try {
    return await work(latchkey);
  } finally {
    await latchkey.close();
  }
}

export async function askNewPassword(
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

/** Who made or deleted a token from the command line, for the audit trail. */
export const MANAGEMENT_CLIENT: ClientInfo = { ip: '', userAgent: 'latchkey management command' };

/** The one user a token command names, found the way a login finds it (as changepassword does). */
export async function userNamed(latchkey: InternalLatchkey, login: string): Promise<User> {
  const user = await findUserByLogin(latchkey.deps, login);
  if (!user) throw new CommandError(`User "${login}" does not exist.`);
  return user;
}
