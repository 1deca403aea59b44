// @ts-check
/**
 * Puts the repository's user documentation (docs/*.md) into the package, as docs/, at every build
 * (build.js runs it; a pack builds first): a generated project's README, .env comments and Latchkey's own error messages point to
 * node_modules/@latchkey/core/docs/<page>.md, which must then be the pages of the very version the
 * project installed. The repository's docs/ stays the one copy anyone edits; this one is
 * git-ignored.
 *
 * Safe while another pack reads docs/ (the test suite packs in several processes at once): a page
 * is written only when its content differs, and only pages gone from the repository are removed.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const repositoryDocs = join(packageRoot, '..', '..', 'docs');
const packagedDocs = join(packageRoot, 'docs');

const pagesIn = (/** @type {string} */ directory) => readdirSync(directory).filter((name) => name.endsWith('.md'));

if (!existsSync(repositoryDocs)) {
  // Packing outside the repository (from an unpacked tarball): its docs/ is already the right one.
  if (!existsSync(packagedDocs)) throw new Error(`copy-docs: neither ${repositoryDocs} nor ${packagedDocs} exists`);
} else {
  mkdirSync(packagedDocs, { recursive: true });
  const pages = pagesIn(repositoryDocs);
  for (const name of pages) {
    const from = join(repositoryDocs, name);
    const to = join(packagedDocs, name);
    if (!existsSync(to) || !readFileSync(to).equals(readFileSync(from))) copyFileSync(from, to);
  }
  for (const name of pagesIn(packagedDocs)) if (!pages.includes(name)) rmSync(join(packagedDocs, name));
}
