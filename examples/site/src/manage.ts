import { runManagementCli } from '@latchkey/core/cli';
import { loadLocalEnvironment } from './config/environment.js';
import { projectSettings } from './config/settings.js';

// `npm run manage -- <command>`: migrate, createsuperuser, changepassword, check, clearsessions,
// create-token, delete-token (`npm run manage -- help` lists them).
loadLocalEnvironment();
await runManagementCli(projectSettings);
