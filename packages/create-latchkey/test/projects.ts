import { spawn } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPOSITORY_ROOT } from '../src/example-site.js';
import { renderProject, writeProject, type RandomValues } from '../src/generate.js';
import { optionsFrom, withDefaults, type ProjectOptions } from '../src/options.js';



export const FIXED_RANDOM: RandomValues = { localSecretKey: 'local-secret-key-for-tests', productionSecretKey: 'production-secret-key-for-tests', adminUrl: 'admin-for-tests/' };

/**
 * Generates a project into a new temporary directory and gives it the workspace's installed
 * packages (a node_modules link), as an `npm install` against this repository's library would,
 * without compiling better-sqlite3 again for every project.
 */
export function generateLinkedProject(answers: Record<string, string>): { directory: string; options: ProjectOptions; files: Map<string, string> } {
  const directory = join(mkdtempSync(join(tmpdir(), 'lk-generated-')), 'project');
  const options = optionsFrom(withDefaults(answers));
  const files = renderProject(options, FIXED_RANDOM, '^0.1.0');
  writeProject(directory, files);
  symlinkSync(join(REPOSITORY_ROOT, 'node_modules'), join(directory, 'node_modules'), 'dir');
  return { directory, options, files };
}

export interface CommandResult {
  code: number | null;
  output: string;
}

/**
 * Runs a command in a directory, collecting stdout and stderr together. The environment is this
 * process's without what the repository's own test run sets (vitest's variables, NODE_ENV, the
 * PostgreSQL test database), so a project's commands run as they would in its own checkout.
 */
export function run(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<CommandResult> {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_ENV' && name !== 'TEST_DATABASE_URL');
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...Object.fromEntries(inherited), ...env } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}
