// What `manage makemigration` does (its command line is declared in makemigration.ts).
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { ParsedArguments } from '../arguments.js';
import type { CommandContext } from '../command.js';
import { CommandError } from '../io.js';
import type { UserField } from '../../core/user-fields.js';
import { openDatabase } from '../../storage/database.js';

const NAME = /^[a-z][a-z0-9_]*$/;
/** A migration's file: the date and time it was written (UTC), then its name. */
const MIGRATION_FILE = /^([0-9]{8}_[0-9]{6}_[a-z][a-z0-9_]*)\.ts$/;

/** `20261203_094512`: sorts as the time it names. */
function stampOf(now: Date): string {
  const iso = now.toISOString();
  return `${iso.slice(0, 10).replaceAll('-', '')}_${iso.slice(11, 19).replaceAll(':', '')}`;
}

/** A migration adding a column for each declared user field that has none (docs/user-fields.md). */
function userFieldsMigration(name: string, fields: readonly UserField[]): string {
  const adds = fields.map((field) => `    await addUserFieldColumn(db, context, '${field.name}', '${field.type}');`);
  const drops = [...fields].reverse().map((field) => `    await dropUserFieldColumn(db, '${field.name}');`);
  return `import { addUserFieldColumn, dropUserFieldColumn, type ProjectMigration } from '@latchkey/core';

// ${name}: the column of each user field src/users/fields.ts declares and the database lacked
// (${fields.map((field) => field.name).join(', ')}). Written by makemigration; the kinds are
// this migration's own, so it stays as it is when the declaration changes later.
export const migration: ProjectMigration = {
  async up(db, context) {
${adds.join('\n')}
  },
  async down(db) {
${drops.join('\n')}
  },
};
`;
}

/**
 * The declared user fields the database has no column for. The database must be up to date
 * first: a pending migration may add one of them, and writing it twice would fail on migrate.
 */
async function fieldsWithoutColumn({ settings, options }: CommandContext): Promise<UserField[]> {
  const declared = options.userFields?.fields ?? [];
  if (declared.length === 0) return [];
  const database = await openDatabase({ url: settings.DATABASE_URL, usernameType: settings.USERNAME_TYPE, ...(options.userFields ? { userFields: options.userFields } : {}) });
  try {
    const pending = await database.pendingMigrations(options.projectMigrations);
    if (pending.length > 0) throw new CommandError(`${pending.length} migration(s) are not applied yet (${pending.join(', ')}): run migrate first, so that this one adds only the columns still missing.`);
    const missing = new Set(await database.missingUserFieldColumns());
    return declared.filter((field) => missing.has(field.name));
  } finally {
    await database.close();
  }
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

export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { io } = context;
  const name = parsed.argument('name');
  if (!NAME.test(name)) throw new CommandError(`"${name}" is not a migration name: use lower-case words joined by underscores, as add_notes.`);
  const given = parsed.string('directory') ?? join('src', 'migrations');
  const directory = isAbsolute(given) ? given : join(io.cwd, given);
  const columns = parsed.flag('empty') ? [] : await fieldsWithoutColumn(context);
  await mkdir(directory, { recursive: true });
  const file = `${stampOf(new Date())}_${name}.ts`;
  const existing = (await readdir(directory)).filter((entry) => MIGRATION_FILE.test(entry));
  if (existing.includes(file)) throw new CommandError(`${file} exists already: wait a second, or choose another name.`);
  // 'wx': never overwrite a migration someone has written.
  await writeFile(join(directory, file), columns.length === 0 ? emptyMigration(name) : userFieldsMigration(name, columns), { flag: 'wx' });
  const names = [...existing, file].map((entry) => entry.replace(/\.ts$/, '')).sort();
  await writeFile(join(directory, 'index.ts'), migrationIndex(names));
  const adds = columns.length === 0 ? '' : ` It adds the column(s) of ${columns.map((field) => field.name).join(', ')}.`;
  io.stdout.write(`Wrote ${relative(io.cwd, join(directory, file))}; listed in ${relative(io.cwd, join(directory, 'index.ts'))}.${adds}\n`);
  return 0;
}
