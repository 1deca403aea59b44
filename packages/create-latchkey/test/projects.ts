import { spawn } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
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

/** What the repository's own test run sets, which a project's commands must not see. */
function isFromThisTestRun(name: string): boolean {
  // vitest's variables; npm's (npm test sets npm_config_* and INIT_CWD for this repository);
  // NODE_ENV=test and the PostgreSQL test database of the suite.
  return name.startsWith('VITEST') || name.startsWith('npm_') || ['INIT_CWD', 'NODE_ENV', 'NODE_OPTIONS', 'TEST_DATABASE_URL'].includes(name);
}

/**
 * Runs a command in a directory, collecting stdout and stderr together. The environment is this
 * process's without what the repository's own test run sets, so a project's commands run as they
 * would in its own checkout.
 */
export function run(command: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<CommandResult> {
  const inherited = Object.entries(process.env).filter(([name]) => !isFromThisTestRun(name));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...Object.fromEntries(inherited), ...env } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** The project's own `npm test`: type check, lint, and its suites (on SQLite here), none skipped. */
export async function expectOwnTestsPass(directory: string): Promise<void> {
  const tested = await run('npm', ['test', '--silent'], directory);
  expect(tested.code, tested.output).toBe(0);
  // eslint-disable-next-line no-control-regex -- the colours of vitest's summary
  const summary = tested.output.replace(/\u001b\[[0-9;]*m/g, '');
  expect(summary).toMatch(/Tests\s+\d+ passed \(\d+\)/);
  expect(summary).not.toMatch(/skipped|failed|todo/);
}

/** Starts `npm run dev` on a free port with a database in the project; resolves with its URL. */
export async function startDev(directory: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn('npm', ['run', 'dev', '--silent'], { cwd: directory, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0' } });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`npm run dev exited with ${code}: ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { url, stop: () => (child.kill('SIGTERM'), exited) };
}
