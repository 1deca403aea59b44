import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OptionError } from './options.js';

/** The library's published name: what a project depends on and imports. */
export const LIBRARY_PACKAGE = '@latchkey/core';

/** How a project gets the library: the spec in its package.json, and the files that spec needs. */
export interface LibraryReference {
  dependency: string;
  /** Written into the project with its other files: the vendored tarball, when there is one. */
  files: ReadonlyMap<string, Uint8Array>;
}

/** Where a project keeps its copy of the library. */
const VENDOR_DIRECTORY = 'vendor';

/** Whether a project's dependency on the library is its own vendored copy. */
export function isVendoredDependency(dependency: string): boolean {
  return dependency.startsWith(`file:${VENDOR_DIRECTORY}/`);
}

/** This package's root: packages/create-latchkey in a checkout, the installed package otherwise. */
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The library tarball a packed generator carries (its prepack puts it there). */
const BUNDLED_LIBRARY = join(PACKAGE_ROOT, VENDOR_DIRECTORY);
const REPOSITORY_ROOT = resolve(PACKAGE_ROOT, '../..');
const REPOSITORY_LIBRARY = join(REPOSITORY_ROOT, 'packages', 'latchkey');

/** A version range, or a tag, that npm can install from the registry. */
const REGISTRY_VERSION = /^(latest|next|[~^]?\d+(\.\d+){0,2}(-[0-9A-Za-z.]+)?)$/;

/** The value of --latchkey-version, refused unless npm would read it as a version, range or tag. */
export function checkedRegistryVersion(value: string): string {
  if (!REGISTRY_VERSION.test(value)) {
    throw new OptionError(`--latchkey-version "${value}" is not allowed: give a version or range such as 0.1.0, ^0.1.0 or ~0.1.0, or latest.`);
  }
  return value;
}

/** Whether the generator runs from a checkout of the Latchkey repository (not an installed copy). */
function runsFromCheckout(): boolean {
  const manifest = join(REPOSITORY_ROOT, 'package.json');
  return existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'latchkey-monorepo';
}

/**
 * Where a project at `targetDirectory` gets the library from:
 * - `--latchkey-version <range>`: the registry, once the library is published there;
 * - a target inside this repository (the example site): a `file:` path to the repository's library;
 * - anywhere else: a copy of the library in the project (`vendor/latchkey-core-<version>.tgz`),
 *   so the project installs wherever it is moved or cloned, and never from a package of the same
 *   name that someone else published.
 */
export function libraryReference(targetDirectory: string, registryVersion?: string): LibraryReference {
  if (registryVersion !== undefined) return { dependency: checkedRegistryVersion(registryVersion), files: new Map() };
  const target = resolve(targetDirectory);
  if (runsFromCheckout() && (target + sep).startsWith(REPOSITORY_ROOT + sep)) {
    return { dependency: `file:${relative(target, REPOSITORY_LIBRARY).split(sep).join('/')}`, files: new Map() };
  }
  const tarball = runsFromCheckout() ? packedRepositoryLibrary() : bundledLibrary();
  const path = `${VENDOR_DIRECTORY}/${tarball.name}`;
  return { dependency: `file:${path}`, files: new Map([[path, tarball.content]]) };
}

interface Tarball {
  name: string;
  content: Buffer;
}

function onlyTarballIn(directory: string): Tarball | undefined {
  const names = existsSync(directory) ? readdirSync(directory).filter((name) => name.endsWith('.tgz')) : [];
  if (names.length !== 1) return undefined;
  return { name: names[0]!, content: readFileSync(join(directory, names[0]!)) };
}

function bundledLibrary(): Tarball {
  const tarball = onlyTarballIn(BUNDLED_LIBRARY);
  if (!tarball) throw new OptionError(`this copy of create-latchkey carries no copy of ${LIBRARY_PACKAGE}; give --latchkey-version to install it from the registry.`);
  return tarball;
}

let packedOnce: Tarball | undefined;

/** The repository's library as `npm pack` makes it (building it first), once per process. */
function packedRepositoryLibrary(): Tarball {
  if (packedOnce) return packedOnce;
  const destination = mkdtempSync(join(tmpdir(), 'latchkey-pack-'));
  try {
    try {
      execFileSync('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: REPOSITORY_LIBRARY, stdio: 'pipe' });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
      throw new Error(`npm pack of ${REPOSITORY_LIBRARY} failed:\n${String(stdout ?? '')}${String(stderr ?? '')}`);
    }
    packedOnce = onlyTarballIn(destination);
    if (!packedOnce) throw new Error(`npm pack of ${REPOSITORY_LIBRARY} made no tarball`);
    return packedOnce;
  } finally {
    rmSync(destination, { recursive: true, force: true });
  }
}
