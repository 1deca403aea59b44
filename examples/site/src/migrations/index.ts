// Written by `npm run manage -- makemigration <name>`, which lists every migration of this folder
// here, oldest first. src/server.ts and src/manage.ts pass this list to Latchkey.
import type { ProjectMigrations } from '@latchkey/core';

export const projectMigrations: ProjectMigrations = {};
