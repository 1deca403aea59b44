// `manage makemigration <name>`: a new, empty migration of the project's own, named by the date
// so that migrations apply in the order they were written (Django's makemigrations --empty).
import { runFrom, type Command } from '../declaration.js';

export const makemigration: Command = {
  summary: "write a new, empty migration of the project's own",
  description:
    "Writes src/migrations/<date>_<time>_<name>.ts, an empty migration for the project's own tables, and lists it in src/migrations/index.ts, which server.ts and manage.ts pass to Latchkey. Fill in its up() (and down()), then run migrate. Run it from the project's folder; nothing is applied.",
  arguments: [{ name: 'name', help: 'what the migration does, in lower-case words joined by underscores (add_notes)' }],
  options: {
    directory: { type: 'string', value: 'DIR', help: 'the folder of the migrations (default src/migrations)' },
  },
  run: runFrom(() => import('./makemigration.run.js')),
};
