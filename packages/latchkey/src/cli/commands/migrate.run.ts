// What `manage migrate` does (its command line is declared in migrate.ts).
import { openDatabase } from '../../storage/database.js';
import type { CommandContext } from '../command.js';

export async function run({ settings, options, io }: CommandContext): Promise<number> {
  const database = await openDatabase({ url: settings.DATABASE_URL, usernameType: settings.USERNAME_TYPE, ...(options.userFields ? { userFields: options.userFields } : {}) });
  try {
    // Latchkey's, then the project's own (src/migrations/, passed to runManagementCli).
    const applied = await database.migrate(options.projectMigrations);
    if (applied.length === 0) io.stdout.write('No migrations to apply.\n');
    for (const name of applied) io.stdout.write(`Applied ${name}.\n`);
    const missing = await database.missingUserFieldColumns();
    if (missing.length > 0) io.stdout.write(`The user field(s) ${missing.join(', ')} have no column yet: run makemigration, then migrate again (docs/user-fields.md).\n`);
  } finally {
    await database.close();
  }
  return 0;
}
