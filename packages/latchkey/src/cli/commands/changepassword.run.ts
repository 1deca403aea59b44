// What `manage changepassword` does (its command line is declared in changepassword.ts). The
// operator is not a staff member: like Django's manage.py changepassword, whoever can run it holds
// the server, so it may set anyone's password, a superuser's included; admin/access.ts decides so,
// as it decides who may change whom in the admin.
import { setUserPassword } from '../../account/users.js';
import { MANAGEMENT_COMMAND, requireMayActOn } from '../../admin/access.js';
import { findUserByLogin } from '../../account/credentials.js';
import type { ParsedArguments } from '../arguments.js';
import { askNewPassword, withLatchkey, type CommandContext } from '../command.js';
import { CommandError, Prompter } from '../io.js';

export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { settings, io } = context;
  const login = parsed.argument('login');
  return withLatchkey(context, async (latchkey) => {
    const user = await findUserByLogin(latchkey.deps, login);
    if (!user) throw new CommandError(`User "${login}" does not exist.`);
    await requireMayActOn(latchkey.deps, MANAGEMENT_COMMAND, user);
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
