/**
 * Both packages as they would be published, used as a stranger would: the library and the
 * generator are packed with `npm pack`, the packed generator writes a project into a directory
 * outside this repository, the project is moved elsewhere, installed there with plain
 * `npm install` (no workspace, no link to this checkout), and then passes its own `npm test`,
 * starts, and serves its login page; moved once more, installed, it installs and starts again.
 * (The install is spared one thing, better-sqlite3's compile from source: see
 * offerRepositoryBetterSqlite3.)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOwnTestsPass, run, startDev } from './projects.js';

const PACKAGES = fileURLToPath(new URL('../..', import.meta.url));
const REPOSITORY = join(PACKAGES, '..');

interface Manifest {
  name: string;
  version: string;
  license?: string;
  repository?: { url: string; directory: string };
  engines?: { node: string };
  bin?: Record<string, string>;
  exports?: Record<string, string | { types: string; default: string }>;
  dependencies?: Record<string, string>;
}

interface Packed {
  tarball: string;
  files: string[];
  manifest: Manifest;
}

/** `npm pack` of one of this repository's packages, and what the tarball holds. */
async function pack(packageDirectory: string, destination: string): Promise<Packed> {
  const before = new Set(readdirSync(destination));
  const packed = await run('npm', ['pack', '--pack-destination', destination], join(PACKAGES, packageDirectory));
  expect(packed.code, packed.output).toBe(0);
  const [name] = readdirSync(destination).filter((file) => !before.has(file));
  const tarball = join(destination, name!);
  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^package\//, ''));
  const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Manifest;
  return { tarball, files, manifest };
}

/** What every published package must say about itself. */
function expectPublishable({ manifest, files }: Packed): void {
  expect(manifest).toMatchObject({ license: 'MIT', engines: { node: '>=20.19' } });
  expect(manifest.repository?.url).toMatch(/^git\+https:\/\//);
  expect(files).toContain('LICENSE');
  expect(files).toContain('README.md');
  for (const target of Object.values(manifest.bin ?? {})) expect(files).toContain(target.replace(/^\.\//, ''));
  // Built JavaScript only: no TypeScript source (declarations aside) and no tests of the package
  // (the generator's template/ is a project's source, its tests included).
  const own = files.filter((file) => !file.startsWith('template/'));
  expect(own.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  expect(own.filter((file) => /\.test\.|(^|\/)test\/|^src\//.test(file))).toEqual([]);
}

const ROOT_BETTER_SQLITE3 = join(REPOSITORY, 'node_modules', 'better-sqlite3');

function versionOf(packageDirectory: string): string {
  return (JSON.parse(readFileSync(join(packageDirectory, 'package.json'), 'utf8')) as Manifest).version;
}

/**
 * better-sqlite3's install step (`prebuild-install || node-gyp rebuild`) looks for a prebuilt
 * binary, which cannot be downloaded on our machines, and so compiles SQLite from source: more
 * than a minute of CPU in every run of this test. The repository's own node_modules/better-sqlite3
 * was compiled by `npm ci` for this very Node: packed once, here in the workspace, under the name
 * prebuild-install looks for (`<name>-v<version>-node-v<abi>-<platform>-<arch>.tar.gz`, holding
 * build/Release/better_sqlite3.node), it is unpacked by the project's install instead of compiled.
 * prebuild-install reads where its local prebuilds are from a .prebuild-installrc in a directory
 * above the package (found from the package's directory upwards), so the project and its commands
 * are left as a stranger's would be; the workspace holds every place the project is moved to.
 *
 * What the test proves is the same: our tarballs install with a plain `npm install` from the
 * registry, and the project passes its own tests and starts on what was installed (prebuild-install
 * also loads the binary before it keeps it). Only better-sqlite3's own compile is skipped, which
 * the repository's `npm ci` does in every CI run. The version is in the tarball's name, so a
 * project that resolves any other version of better-sqlite3 than the repository's does not match
 * it and compiles, as before; so does one on another Node or platform.
 */
function offerRepositoryBetterSqlite3(workspace: string): void {
  const binary = join(ROOT_BETTER_SQLITE3, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return;
  const prebuilds = join(workspace, 'prebuilds');
  mkdirSync(prebuilds);
  // (On glibc; a build for musl would have "musl" after the platform, and this one is not offered there.)
  const tarball = `better-sqlite3-v${versionOf(ROOT_BETTER_SQLITE3)}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(prebuilds, tarball), '-C', ROOT_BETTER_SQLITE3, 'build/Release/better_sqlite3.node']);
  writeFileSync(join(workspace, '.prebuild-installrc'), `${JSON.stringify({ 'local-prebuilds': prebuilds })}\n`);
}

/** `npm run dev` in the project, and its login page: the email login field of a username_type=email project. */
async function expectLoginPageServed(project: string): Promise<void> {
  const server = await startDev(project);
  try {
    const login = await fetch(`${server.url}/accounts/login/`, { headers: { host: 'localhost:8000' } });
    expect(login.status).toBe(200);
    expect(await login.text()).toMatch(/<input[^>]*name="login"[^>]*type="email"/);
  } finally {
    await server.stop();
  }
}

describe('the packed packages, used outside this repository', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'lk-packed-'));
  const packs = join(workspace, 'packs');
  let library: Packed;
  let generator: Packed;

  beforeAll(async () => {
    expect(relative(REPOSITORY, workspace).startsWith('..')).toBe(true);
    mkdirSync(packs);
    library = await pack('latchkey', packs);
    generator = await pack('create-latchkey', packs);
    offerRepositoryBetterSqlite3(workspace);
  }, 120_000);
  // A fresh install is a few hundred megabytes: not left behind in the temporary directory.
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  it('the library is @latchkey/core: built JavaScript, declarations, templates, static files, its docs and catalogs, and exports that exist', () => {
    expectPublishable(library);
    expect(library.manifest.name).toBe('@latchkey/core');
    for (const [subpath, target] of Object.entries(library.manifest.exports!)) {
      const targets = typeof target === 'string' ? [target] : [target.types, target.default];
      for (const file of targets) expect(library.files, subpath).toContain(file.replace(/^\.\//, ''));
    }
    expect(library.files).toEqual(expect.arrayContaining(['dist/templates/account/login.html', 'dist/static/latchkey.css', 'dist/account/passwords/bcrypt-worker.js']));
    // The user documentation a project's pointers lead to (node_modules/@latchkey/core/docs/).
    expect(library.files).toEqual(expect.arrayContaining(['docs/README.md', 'docs/settings.md', 'docs/extending.md']));
    // Its translation catalogs (node_modules/@latchkey/core/locale/), which a project's README points to.
    expect(library.files).toEqual(expect.arrayContaining(['locale/latchkey.pot', 'locale/fr/LC_MESSAGES/latchkey.po', 'locale/pt_BR/LC_MESSAGES/latchkey.po']));
    const catalog = /^locale\/(latchkey\.pot|[a-z]{2,3}(_[A-Za-z]+)?\/LC_MESSAGES\/latchkey\.po)$/;
    expect(library.files.filter((file) => !['package.json', 'README.md', 'LICENSE'].includes(file) && !/^(dist|bin)\/|^docs\/[a-z0-9-]+\.md$/i.test(file) && !catalog.test(file))).toEqual([]);
  });

  it('the generator is create-latchkey: its command, the templates, and a copy of the library to vendor', () => {
    expectPublishable(generator);
    expect(generator.manifest.name).toBe('create-latchkey');
    expect(generator.manifest.version).toBe(library.manifest.version);
    expect(generator.manifest.bin).toEqual({ 'create-latchkey': './bin/create-latchkey.js' });
    expect(generator.manifest.dependencies ?? {}).toEqual({});
    expect(generator.files).toEqual(expect.arrayContaining(['dist/main.js', 'template/package.json', 'template/_gitignore', `vendor/latchkey-core-${library.manifest.version}.tgz`]));
  });

  it('generates a project that installs wherever it is moved, passes its own tests and serves its login page', { timeout: 600_000 }, async () => {
    const generatedIn = join(workspace, 'generated');
    mkdirSync(generatedIn);
    // email with the API: generated-projects.test.ts leaves this combination's own tests to this one.
    const generated = await run('npx', ['--yes', `file:${generator.tarball}`, 'shop', '--yes', '--username-type', 'email', '--use-drf', 'y'], generatedIn);
    expect(generated.code, generated.output).toBe(0);
    expect(generated.output).toContain('Created My Awesome Project in shop');

    // Moved, as a project is when it is committed and cloned elsewhere.
    const project = join(workspace, 'elsewhere', 'shop');
    mkdirSync(join(workspace, 'elsewhere'));
    renameSync(join(generatedIn, 'shop'), project);
    const installed = await run('npm', ['install', '--no-audit', '--no-fund'], project);
    expect(installed.code, installed.output).toBe(0);

    // The library came from the project's own vendor/ copy, not from this checkout.
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as Manifest;
    expect(manifest.dependencies?.['@latchkey/core']).toBe(`file:vendor/latchkey-core-${library.manifest.version}.tgz`);
    const installedLibrary = join(project, 'node_modules', '@latchkey', 'core');
    expect(lstatSync(installedLibrary).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(project, 'package-lock.json'), 'utf8')).not.toContain(REPOSITORY);
    // Compiled after all (a compile leaves its object files in build/): not an error, only slower.
    const betterSqlite3 = join(project, 'node_modules', 'better-sqlite3');
    if (existsSync(join(betterSqlite3, 'build', 'Release', 'obj.target'))) {
      console.warn(`packed.test: better-sqlite3 ${versionOf(betterSqlite3)} was compiled from source in the project (the repository's is ${versionOf(ROOT_BETTER_SQLITE3)}; when they differ, updating the repository's lock file makes this test fast again)`);
    }

    await expectOwnTestsPass(project);
    await expectLoginPageServed(project);

    // Moved again once installed, node_modules and package-lock.json with it (a directory renamed,
    // a checkout copied whole): npm install there succeeds (quickly: nothing is fetched or built
    // again), nothing in the lock file points to where the project was, and it still starts.
    const movedAgain = join(workspace, 'renamed', 'shop');
    mkdirSync(join(workspace, 'renamed'));
    renameSync(project, movedAgain);
    const reinstalled = await run('npm', ['install', '--no-audit', '--no-fund'], movedAgain);
    expect(reinstalled.code, reinstalled.output).toBe(0);
    const lock = readFileSync(join(movedAgain, 'package-lock.json'), 'utf8');
    for (const absolute of [project, generatedIn, movedAgain]) expect(lock).not.toContain(absolute);
    await expectLoginPageServed(movedAgain);
  });
});
