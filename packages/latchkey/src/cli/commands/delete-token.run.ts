// What `manage delete-token` does (its command line is declared in delete-token.ts).
import { MANAGEMENT_COMMAND, requireMayActOn } from '../../admin/access.js';
import { deleteApiToken } from '../../tokens/api-tokens.js';
import type { ParsedArguments } from '../arguments.js';
import { MANAGEMENT_CLIENT, userNamed, withLatchkey, type CommandContext } from '../command.js';

/** Deletes the user's API token: every copy of its key stops working at once, on every instance. */
export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  return withLatchkey(context, async (latchkey) => {
    const user = await userNamed(latchkey, parsed.argument('login'));
    // The operator may act on anyone (admin/access.ts decides it, for every door).
    await requireMayActOn(latchkey.deps, MANAGEMENT_COMMAND, user);
    const deleted = await deleteApiToken(latchkey.deps, user, MANAGEMENT_CLIENT);
    context.io.stdout.write(deleted ? 'Token deleted.\n' : `User "${user.username ?? user.email}" has no token.\n`);
    return 0;
  });
}
