// The management commands, in the order `manage help` lists them. A new command is a file in this
// directory and one line here.
import type { CommandContext } from '../command.js';
import { changepassword } from './changepassword.js';
import { check } from './check.js';
import { clearsessions } from './clearsessions.js';
import { createsuperuser } from './createsuperuser.js';
import { createToken } from './create-token.js';
import { deleteToken } from './delete-token.js';
import { importDjango } from './import-django.js';
import { migrate } from './migrate.js';
import { socialapp } from './socialapp.js';

export const COMMANDS: Record<string, { run: (context: CommandContext) => Promise<number>; help: string }> = {
  migrate: { run: migrate, help: 'apply pending database migrations' },
  createsuperuser: { run: createsuperuser, help: 'create a staff superuser [--username U] [--email E] [--noinput]' },
  changepassword: { run: changepassword, help: "change a user's password: changepassword <login>" },
  check: { run: check, help: 'check the settings and database [--deploy]' },
  clearsessions: { run: clearsessions, help: 'remove sessions past their idle or absolute limit (run it daily)' },
  'create-token': { run: createToken, help: "print a user's API token, creating it if needed: create-token [--reset] <login>" },
  'delete-token': { run: deleteToken, help: "delete a user's API token: delete-token <login>" },
  'import-django': { run: importDjango, help: "import a cookiecutter-django project's accounts: import-django <database URL | dumpdata file> [--dry-run] [--verify [--sample N]] [--batch-size N]" },
  socialapp: { run: socialapp, help: 'social sign-in apps in the database: socialapp list | add --provider P ... | remove <id>' },
};
