// The management commands, in the order `manage help` lists them. A new command is a file in this
// directory, declaring its options and arguments (its help is written from them), and one line here.
import type { ManagementCommand } from '../declaration.js';
import { changepassword } from './changepassword.js';
import { check } from './check.js';
import { clearsessions } from './clearsessions.js';
import { createsuperuser } from './createsuperuser.js';
import { createToken } from './create-token.js';
import { deleteToken } from './delete-token.js';
import { importDjango } from './import-django.js';
import { makemessages } from './makemessages.js';
import { makemigration } from './makemigration.js';
import { migrate } from './migrate.js';
import { socialapp } from './socialapp.js';

export const COMMANDS: Readonly<Record<string, ManagementCommand>> = {
  migrate,
  makemigration,
  makemessages,
  createsuperuser,
  changepassword,
  check,
  clearsessions,
  'create-token': createToken,
  'delete-token': deleteToken,
  'import-django': importDjango,
  socialapp,
};
