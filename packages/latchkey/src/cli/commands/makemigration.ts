// `manage makemigration <name>`: a new, empty migration of the project's own, named by the date
// so that migrations apply in the order they were written (Django's makemigrations --empty).
import { runFrom, type Command } from '../declaration.js';

export const makemigration: Command = {
  summary: "write a new, empty migration of the project's own",
  description:
    "Writes src/migrations/<date>_<time>_<name>.ts and lists it in src/migrations/index.ts, which server.ts and manage.ts pass to Latchkey. When src/users/fields.ts declares user fields the database has no column for, the migration adds those columns (the database must be up to date: run migrate first); otherwise it is empty, for the project's own tables: fill in its up() (and down()). Then run migrate. Run it from the project's folder; nothing is applied.",
  arguments: [{ name: 'name', help: 'what the migration does, in lower-case words joined by underscores (add_notes)' }],
  options: {
    directory: { type: 'string', value: 'DIR', help: 'the folder of the migrations (default src/migrations)' },
    empty: { type: 'boolean', help: "write an empty migration even when user fields lack their columns (the database is not read)" },
  },
  run: runFrom(() => import('./makemigration.run.js')),
};
