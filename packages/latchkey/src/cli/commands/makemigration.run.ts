// What `manage makemigration` does (its command line is declared in makemigration.ts).
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { ParsedArguments } from '../arguments.js';
import type { CommandContext } from '../command.js';
import { CommandError } from '../io.js';

const NAME = /^[a-z][a-z0-9_]*$/;
/** A migration's file: the date and time it was written (UTC), then its name. */
const MIGRATION_FILE = /^([0-9]{8}_[0-9]{6}_[a-z][a-z0-9_]*)\.ts$/;

/** `20261203_094512`: sorts as the time it names. */
function stampOf(now: Date): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 10).replaceAll('-', '')}_${iso.slice(11, 19).replaceAll(':', '')}`;
}

function emptyMigration(name: string): string {
  return `import type { ProjectMigration } from '@latchkey/core';

// ${name}: say here what this migration changes, and why. Build its statements with db.schema
// (and \`sql\` from kysely for what it lacks); context.dialect, 'sqlite' or 'postgres', tells the
// two apart where they differ. See node_modules/@latchkey/core/docs/project-data.md.
export const migration: ProjectMigration = {
  // Empty until you write it, as:
  //   async up(db) {
  //     await db.schema.createTable('notes').addColumn('id', 'integer', (column) => column.primaryKey()).execute();
  //   },
  up: () => Promise.resolve(),
};
`;
}

/** The list server.ts and manage.ts pass to Latchkey: every migration of the folder, in order. */
function migrationIndex(names: readonly string[]): string {
  const imports = names.map((name) => `import { migration as m${name} } from './${name}.js';`);
  const entries = names.map((name) => `  '${name}': m${name},`);
  return [
    '// Written by `npm run manage -- makemigration <name>`, which lists every migration of this folder',
    '// here, oldest first. src/server.ts and src/manage.ts pass this list to Latchkey.',
    "import type { ProjectMigrations } from '@latchkey/core';",
    ...imports,
    '',
    `export const projectMigrations: ProjectMigrations = {${names.length === 0 ? '' : `\n${entries.join('\n')}\n`}};`,
    '',
  ].join('\n');
}

export async function run({ io }: CommandContext, parsed: ParsedArguments): Promise<number> {
  const name = parsed.argument('name');
  if (!NAME.test(name)) throw new CommandError(`"${name}" is not a migration name: use lower-case words joined by underscores, as add_notes.`);
  const given = parsed.string('directory') ?? join('src', 'migrations');
  const directory = isAbsolute(given) ? given : join(io.cwd, given);
  await mkdir(directory, { recursive: true });
  const file = `${stampOf(new Date())}_${name}.ts`;
  const existing = (await readdir(directory)).filter((entry) => MIGRATION_FILE.test(entry));
  if (existing.includes(file)) throw new CommandError(`${file} exists already: wait a second, or choose another name.`);
  // 'wx': never overwrite a migration someone has written.
  await writeFile(join(directory, file), emptyMigration(name), { flag: 'wx' });
  const names = [...existing, file].map((entry) => entry.replace(/\.ts$/, '')).sort();
  await writeFile(join(directory, 'index.ts'), migrationIndex(names));
  io.stdout.write(`Wrote ${relative(io.cwd, join(directory, file))}; listed in ${relative(io.cwd, join(directory, 'index.ts'))}.\n`);
  return 0;
}
