// What `manage check` does (its command line is declared in check.ts).
import type { ParsedArguments } from '../arguments.js';
import { findDeploymentProblems, formatProblems } from '../check.js';
import { withLatchkey, type CommandContext } from '../command.js';

export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  // Opening Latchkey proves the database is reachable and fully migrated.
  await withLatchkey(context, () => Promise.resolve());
  const problems = parsed.flag('deploy') ? findDeploymentProblems(context.settings) : [];
  context.io.stdout.write(formatProblems(problems));
  return problems.length === 0 ? 0 : 1;
}
