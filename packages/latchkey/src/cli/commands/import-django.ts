// `manage import-django <source> [--dry-run] [--verify]`: moves a cookiecutter-django project's
// accounts into Latchkey, or checks an import done (import-django.run.ts). The source is the
// Django project's database, opened read-only, or a `manage.py dumpdata` file.
import { runFrom, type Command } from '../declaration.js';

export const importDjango: Command = {
  summary: "import a cookiecutter-django project's accounts",
  description:
    "Imports a cookiecutter-django project's users (with the user fields src/users/fields.ts declares), email addresses, API tokens, MFA authenticators, social apps, accounts and tokens, and admin permissions, in one transaction; a second run writes nothing new. The report lists every skipped row with its reason, never a secret. docs/migrating-from-django.md walks through a whole move.",
  arguments: [{ name: 'source', help: "the Django project's database (postgres://... or sqlite:PATH, opened read-only), or a `manage.py dumpdata` file" }],
  options: {
    'dry-run': { type: 'boolean', help: 'report what would be imported, writing nothing' },
    verify: { type: 'boolean', help: 'import nothing: check a sample of users against the source, exiting with status 1 on a difference' },
    sample: { type: 'string', value: 'N', help: 'how many users --verify checks (200)' },
    'batch-size': { type: 'string', value: 'N', help: 'how many rows are read and written at a time (1000)' },
  },
  run: runFrom(() => import('./import-django.run.js')),
};
