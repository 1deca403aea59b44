// @ts-check
/**
 * Builds what the package publishes: tsc compiles the exported modules (and what they import)
 * into dist/ with their type declarations, and the files the code reads at run time (templates,
 * the stylesheet, the bcrypt worker) are copied beside them.
 *
 * It is safe to run while other processes read dist/ (the test suite does): tsc's incremental
 * build writes nothing when nothing changed, and a copy is made only when its content differs.
 * Files whose source is gone are removed, so a deleted module is never published.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = join(root, 'src');
const output = join(root, 'dist');

/** @param {string} directory @returns {string[]} every file below it, as paths relative to it */
function filesUnder(directory) {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(directory, join(entry.parentPath, entry.name)));
}

/** Run-time files: everything in src/ that is neither TypeScript nor a test. */
const isAsset = (/** @type {string} */ path) => !path.endsWith('.ts') && !/\.test\./.test(path);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

for (const path of filesUnder(source).filter(isAsset)) {
  const from = join(source, path);
  const to = join(output, path);
  if (existsSync(to) && readFileSync(to).equals(readFileSync(from))) continue;
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}

/** The source a file in dist/ comes from: the module it was compiled from, or the asset itself. */
function hasSource(/** @type {string} */ path) {
  const compiledFrom = path.replace(/\.d\.ts$/, '.ts').replace(/\.js$/, '.ts');
  return existsSync(join(source, compiledFrom)) || existsSync(join(source, path));
}

for (const path of filesUnder(output)) {
  if (path !== '.tsbuildinfo' && !hasSource(path)) rmSync(join(output, path));
}
