#!/usr/bin/env node
// The `latchkey` command: a project's management commands, run against its settings module.
//   latchkey [--settings src/config/settings.ts] <command> [options]
// The library ships TypeScript sources, so this registers tsx's loader before importing them.
import { register } from 'tsx/esm/api';

register();
const { runFromCommandLine } = await import('../src/cli/bin.ts');
await runFromCommandLine(process.argv.slice(2));
