// `manage check [--deploy]`, as Django's: fails unless the settings load and the database is
// reachable and migrated; --deploy adds the settings that are dangerous in production (../check.ts).
import { parseArgs } from 'node:util';
import { findDeploymentProblems, formatProblems } from '../check.js';
import { withLatchkey, type CommandContext } from '../command.js';

export async function check(context: CommandContext): Promise<number> {
  const { settings, io, args } = context;
  const { values } = parseArgs({ args, options: { deploy: { type: 'boolean' } } });
  // Opening Latchkey proves the database is reachable and fully migrated.
  await withLatchkey(context, () => Promise.resolve());
  const problems = values.deploy ? findDeploymentProblems(settings) : [];
  io.stdout.write(formatProblems(problems));
  return problems.length === 0 ? 0 : 1;
}
