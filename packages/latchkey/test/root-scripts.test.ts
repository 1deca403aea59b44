/**
 * The repository's `npm run manage` as a person runs it: a mistyped option ends with the command's
 * one error line and its exit status, and npm adds none of its `npm error Lifecycle script ...`
 * lines (which it prints when a nested `npm run -w` fails). The library is built beforehand (as
 * `npm test` does), so the build step finds nothing to do.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repository = fileURLToPath(new URL('../../../', import.meta.url));
/** npm, tsx and the command on a loaded two-core machine; the tests allow a little more. */
const NPM_TIMEOUT_MS = 100_000;
const TEST_TIMEOUT_MS = 120_000;

function npm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // npm's update notice would otherwise print to stderr whenever its weekly check falls due
    // (and ask the registry); the timeout leaves no npm behind should one hang.
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'development', npm_config_update_notifier: 'false' };
    execFile('npm', args, { cwd: repository, env, timeout: NPM_TIMEOUT_MS }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
}

describe('npm run manage at the repository root', () => {
  it('ends a refused command line with its one error line and status 1, and nothing from npm', async () => {
    const result = await npm(['run', 'manage', '--', 'createsuperuser', '--bogus']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('Error: Unknown option \'--bogus\'. Run "createsuperuser --help" for its usage.\n');
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/npm (error|ERR!)/);
    // Room for a build, should a source be newer than the last one.
  }, TEST_TIMEOUT_MS);

  it('prints the help on standard output with status 0', async () => {
    const result = await npm(['run', '--silent', 'manage', '--', 'createsuperuser', '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: manage createsuperuser \[options\]\n/);
  }, TEST_TIMEOUT_MS);

  it('runs the command with node itself, after a build that stops when nothing changed', () => {
    const scripts = (JSON.parse(readFileSync(`${repository}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const name of ['manage', 'start']) {
      // A nested `npm run` is what prints npm's error lines, and spends a second more on npm.
      expect(scripts[name]).not.toMatch(/npm run/);
      expect(scripts[name]).toMatch(/^node packages\/latchkey\/scripts\/build\.js && cd examples\/site && exec node --import tsx src\/\w+\.ts$/);
    }
  });
});
