import { runManagementCli } from 'latchkey/cli';
import { projectSettings } from './config/settings.js';

await runManagementCli(projectSettings);
