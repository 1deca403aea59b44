// `manage migrate`, as Django's: applies the database migrations not yet applied.
import { runFrom, type Command } from '../declaration.js';

export const migrate: Command = {
  summary: 'apply pending database migrations',
  description:
    "Applies every database migration not yet applied, Latchkey's and then the project's own (src/migrations/), and says which. Running it again is harmless; for SQLite it creates the database file if there is none. The other commands, and the server outside local mode, need a fully migrated database.",
  run: runFrom(() => import('./migrate.run.js')),
};
