// `manage changepassword <login>`, as Django's: sets a user's password from a terminal, for an
// operator helping someone locked out.
import { setUserPassword } from '../../account/users.js';
import { findUserByLogin } from '../../account/credentials.js';
import { askNewPassword, withLatchkey, type CommandContext } from '../command.js';
import { CommandError, Prompter } from '../io.js';

export async function changepassword(context: CommandContext): Promise<number> {
  const { settings, io, args } = context;
  const login = args[0];
  if (!login) throw new CommandError('Usage: changepassword <login>');
  return withLatchkey(context, async (latchkey) => {
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
