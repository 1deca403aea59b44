#!/usr/bin/env node
// The `latchkey` command: a project's management commands, run against its settings module.
//   latchkey [--settings src/config/settings.ts] <command> [options]
// A project's settings module is TypeScript, so this registers tsx's loader before loading it.
import { register } from 'tsx/esm/api';

register();
const { runFromCommandLine } = await import('../dist/cli/bin.js');
await runFromCommandLine(process.argv.slice(2));
