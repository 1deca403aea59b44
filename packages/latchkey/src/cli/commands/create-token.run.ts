// What `manage create-token` does (its command line is declared in create-token.ts).
import { MANAGEMENT_COMMAND, requireMayActOn } from '../../admin/access.js';
import { deleteApiToken, issueApiToken } from '../../tokens/api-tokens.js';
import type { ParsedArguments } from '../arguments.js';
import { MANAGEMENT_CLIENT, userNamed, withLatchkey, type CommandContext } from '../command.js';

/**
 * Prints the user's API token key, creating the token if they have none (DRF's drf_create_token):
 * the same key as POST /api/auth-token/ gives, so a script can fetch it. Only the key goes to
 * standard output, so that `KEY=$(manage create-token alice)` captures exactly it. `--reset`
 * deletes the token first, for a key that has leaked: the old key stops working at once.
 */
export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { io } = context;
  return withLatchkey(context, async (latchkey) => {
    const user = await userNamed(latchkey, parsed.argument('login'));
    // The operator may act on anyone (admin/access.ts decides it, for every door).
    await requireMayActOn(latchkey.deps, MANAGEMENT_COMMAND, user);
    if (parsed.flag('reset')) await deleteApiToken(latchkey.deps, user, MANAGEMENT_CLIENT);
    const key = await issueApiToken(latchkey.deps, user, MANAGEMENT_CLIENT);
    if (!user.isActive) io.stderr.write(`Warning: user "${user.username ?? user.email}" is inactive: the token is refused until the account is active again.\n`);
    io.stdout.write(`${key}\n`);
    return 0;
  });
}
