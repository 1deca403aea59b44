import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { libraryReference } from './library.js';

const REPOSITORY = new URL('../../..', import.meta.url).pathname;

/** A file of a tarball, read with tar as a person would. */
function fileInTarball(tarball: Uint8Array, path: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'lk-tarball-')), 'library.tgz');
  writeFileSync(file, tarball);
  return execFileSync('tar', ['-xzOf', file, `package/${path}`], { encoding: 'utf8' });
}

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
  });

  it('with --latchkey-version: that version from the registry, and no files', () => {
    expect(libraryReference(join(tmpdir(), 'shop'), '~0.2.0')).toEqual({ dependency: '~0.2.0', files: new Map() });
  });
});
