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
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
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

/**
 * The newest change to what the build reads: every file and folder below src/ (a folder changes
 * when a file in it is added, renamed or deleted) except the tests, which are never built, the
 * build's own configuration, and the installed packages (npm rewrites node_modules/.package-lock.json
 * on every install, and a dependency's types can change what tsc writes).
 */
function newestInput() {
  let newest = 0;
  const consider = (/** @type {string} */ path) => (newest = Math.max(newest, statSync(path).mtimeMs));
  const visit = (/** @type {string} */ directory) => {
    consider(directory);
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (!/\.test\./.test(entry.name)) consider(path);
    }
  };
  visit(source);
  const require = createRequire(import.meta.url);
  const repository = join(root, '..', '..');
  const configuration = [join(root, 'tsconfig.build.json'), join(repository, 'tsconfig.json'), fileURLToPath(import.meta.url)];
  for (const path of [...configuration, join(repository, 'node_modules', '.package-lock.json'), require.resolve('typescript/package.json')]) {
    if (existsSync(path)) consider(path);
  }
  return newest;
}

// tsc's incremental build info is dated when a build succeeds (below): when nothing the build
// reads is newer, dist/ is what a build would make, and the build stops here. That takes well
// under a second, where tsc needs ten or more to read and check the program even to change nothing;
// `npm start`, `npm run manage` and `npm test` all build first. Delete dist/.tsbuildinfo to force
// a build.
const buildInfo = join(output, '.tsbuildinfo');
// The repository's docs/ into the package's, as a pack does (copy-docs.js writes only what
// differs), so that the pointers to node_modules/@latchkey/core/docs/ in Latchkey's messages
// resolve in this repository too, whether or not the code changed.
await import('./copy-docs.js');
if (existsSync(buildInfo) && statSync(buildInfo).mtimeMs >= newestInput()) process.exit(0);
// Dated from before tsc reads anything, so that a source saved during the build is built next time.
const started = new Date();

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

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
} catch (error) {
  // tsc wrote its build info even so: dated back, it leaves the next run to build again.
  if (existsSync(buildInfo)) utimesSync(buildInfo, new Date(0), new Date(0));
  // tsc has printed its errors; a stack trace of this script would only bury them.
  process.exit(/** @type {{ status?: number }} */ (error).status ?? 1);
}

// Last, once everything above succeeded (a failure leaves the date older, and the next run builds).
if (existsSync(buildInfo)) utimesSync(buildInfo, started, started);
