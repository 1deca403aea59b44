// `manage check [--deploy]`, as Django's: fails unless the settings load and the database is
// reachable and migrated; --deploy adds the settings that are dangerous in production (../check.ts).
import { runFrom, type Command } from '../declaration.js';

export const check: Command = {
  summary: 'check settings and database; --deploy: production settings too',
  description:
    'Loads the settings and opens the database: fails if the database cannot be reached or a migration is pending. Exits with status 1 when it finds any issue, so that a deploy pipeline can stop on it.',
  options: {
    deploy: { type: 'boolean', help: 'also check the settings that are dangerous in production (latchkey.W001 and on, see docs/production.md)' },
  },
  run: runFrom(() => import('./check.run.js')),
};
