import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { docsPage } from '../../latchkey/src/core/docs-page.js';
import { freshRandomValues, renderProject } from './generate.js';
import { libraryReference } from './library.js';
import { optionsFrom, withDefaults } from './options.js';

const REPOSITORY = new URL('../../..', import.meta.url).pathname;

/** A file of a tarball, read with tar as a person would. */
function fileInTarball(tarball: Uint8Array, path: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'lk-tarball-')), 'library.tgz');
  writeFileSync(file, tarball);
  return execFileSync('tar', ['-xzOf', file, `package/${path}`], { encoding: 'utf8' });
}

/** Packing builds the library first: slow on a busy machine, and done once per process. */
const PACKING_TIMEOUT_MS = 180_000;

describe('where a generated project gets the library', () => {
  it('inside this repository: the repository library, by a relative path', () => {
    expect(libraryReference(join(REPOSITORY, 'examples', 'site'))).toEqual({ dependency: 'file:../../packages/latchkey', files: new Map() });
    expect(libraryReference(join(REPOSITORY, 'projects', 'shop')).dependency).toBe('file:../../packages/latchkey');
  });

  it('anywhere else: the library packed into the project, built JavaScript with its declarations', () => {
    const reference = libraryReference(join(tmpdir(), 'shop'));
    expect(reference.dependency).toBe('file:vendor/latchkey-core-0.1.0.tgz');
    const tarball = reference.files.get('vendor/latchkey-core-0.1.0.tgz')!;
    expect(JSON.parse(fileInTarball(tarball, 'package.json'))).toMatchObject({ name: '@latchkey/core', version: '0.1.0' });
    expect(fileInTarball(tarball, 'dist/index.js')).toContain('export');
    expect(fileInTarball(tarball, 'dist/index.d.ts')).toContain('createLatchkey');
  }, PACKING_TIMEOUT_MS);

  it('with --latchkey-version: that version from the registry, and no files', () => {
    expect(libraryReference(join(tmpdir(), 'shop'), '~0.2.0')).toEqual({ dependency: '~0.2.0', files: new Map() });
  });
});

/**
 * A generated project's README, .env files, comments and Latchkey's own messages point to
 * Latchkey's documentation; every pointer must lead to a page that exists once the project's
 * dependencies are installed: the docs the library's package carries, of the version installed.
 * (Here, beside the packing above, so that the library is packed once for both.)
 */
const INSTALLED_DOCS = 'node_modules/@latchkey/core/docs/';

/** Every mention of a docs page ("docs/<page>.md") in a text, with what precedes it on its line. */
function docsMentions(text: string): { mention: string; page: string }[] {
  return [...text.matchAll(/(\S*)docs\/([a-z0-9-]+\.md)/g)].map((match) => ({ mention: match[0], page: match[2]! }));
}

describe("the pointers to Latchkey's docs in a generated project", () => {
  let project: string;
  let files: Map<string, string>;

  beforeAll(() => {
    // A project generated outside the repository, with the library's tarball unpacked where npm
    // install puts it.
    project = mkdtempSync(join(tmpdir(), 'lk-docs-'));
    const library = libraryReference(project);
    files = renderProject(optionsFrom(withDefaults({ use_drf: 'y' })), freshRandomValues(), library.dependency);
    const [tarballPath, tarball] = [...library.files][0]!;
    writeFileSync(join(project, 'library.tgz'), tarball);
    const installed = join(project, 'node_modules', '@latchkey', 'core');
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', join(project, 'library.tgz'), '-C', installed, '--strip-components=1']);
    expect(tarballPath).toMatch(/^vendor\/latchkey-core-.*\.tgz$/);
  }, PACKING_TIMEOUT_MS);

  it('name the installed package’s docs, and every page they name is there', () => {
    const mentions = [...files].flatMap(([path, text]) => docsMentions(text).map((found) => ({ path, ...found })));
    // The README, both environment files, the settings, the management entry point, the user
    // fields and the users module that reads them, and tests.
    expect(new Set(mentions.map(({ path }) => path))).toEqual(
      new Set([
        'README.md',
        '.envs/local.env',
        '.envs/production.env',
        'src/config/settings.ts',
        'src/manage.ts',
        'src/users/fields.ts',
        'src/users/pages.ts',
        'src/users/api.ts',
        'test/guards.test.ts',
        'test/project.ts',
      ]),
    );
    for (const { path, mention, page } of mentions) {
      expect(mention, `${path} mentions ${mention}`).toContain(`${INSTALLED_DOCS}${page}`);
      expect(existsSync(join(project, INSTALLED_DOCS, page)), `${path}: ${INSTALLED_DOCS}${page}`).toBe(true);
    }
  });

  it('as README links that resolve from the README', () => {
    const links = [...files.get('README.md')!.matchAll(/\]\(([^)#\s]+\.md)\)/g)].map((match) => match[1]!);
    expect(links).toContain(`${INSTALLED_DOCS}settings.md`);
    for (const link of links) expect(existsSync(join(project, posix.normalize(link))), link).toBe(true);
  });

  it("and Latchkey's own messages point to a page the package carries", () => {
    expect(existsSync(join(project, docsPage('settings.md')))).toBe(true);
    expect(existsSync(join(project, docsPage('migrating-from-django.md')))).toBe(true);
  });
});
