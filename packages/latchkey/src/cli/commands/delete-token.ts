// `manage delete-token <login>`: revokes a user's API token from the command line. Django REST
// framework has no such command (drf_create_token --reset replaces a key, never just removes it);
// this is the one to run when a key must stop working and no new one is wanted.
import { MANAGEMENT_COMMAND, requireMayActOn } from '../../admin/access.js';
import { deleteApiToken } from '../../tokens/api-tokens.js';
import { loginArgument, MANAGEMENT_CLIENT, userNamed, withLatchkey, type CommandContext } from '../command.js';

/** Deletes the user's API token: every copy of its key stops working at once, on every instance. */
export async function deleteToken(context: CommandContext): Promise<number> {
  const { io, args } = context;
  const { login } = loginArgument(args, 'delete-token <login>');
  return withLatchkey(context, async (latchkey) => {
    const user = await userNamed(latchkey, login);
    // The operator may act on anyone (admin/access.ts decides it, for every door).
    await requireMayActOn(latchkey.deps, MANAGEMENT_COMMAND, user);
    const deleted = await deleteApiToken(latchkey.deps, user, MANAGEMENT_CLIENT);
    io.stdout.write(deleted ? 'Token deleted.\n' : `User "${user.username ?? user.email}" has no token.\n`);
    return 0;
  });
}
