import { runManagementCli } from '@latchkey/core/cli';
import { loadLocalEnvironment } from './config/environment.js';
import { projectSettings } from './config/settings.js';
import { projectMigrations } from './migrations/index.js';
import { userFields } from './users/fields.js';

// `npm run manage -- <command>`: migrate, makemigration, makemessages (also `npm run makemessages`),
// createsuperuser, changepassword, check, clearsessions, create-token, delete-token, socialapp,
// import-django (`npm run manage -- help` lists them). The project's own migrations
// (src/migrations/) go with Latchkey's; its user fields (src/users/fields.ts) tell makemigration
// which columns to add and import-django what to carry.
// A Django project whose MFA adapter encrypted its secrets passes its decrypt here for
// import-django: runManagementCli(projectSettings, { projectMigrations, userFields, djangoDecrypt }),
// see node_modules/@latchkey/core/docs/migrating-from-django.md.
loadLocalEnvironment();
await runManagementCli(projectSettings, { projectMigrations, userFields });
