/**
 * The generator's promise, checked the way a person would: every combination of username_type and
 * use_drf generates a project that installs (against this workspace's packages), type-checks,
 * lints, passes its own tests, starts, and answers as its options say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderExampleSite } from '../src/example-site.js';
import { expectOwnTestsPass, generateLinkedProject, run, startDev } from './projects.js';

const COMBINATIONS = [
  { username_type: 'username', use_drf: 'y' },
  { username_type: 'email', use_drf: 'y' },
  { username_type: 'username', use_drf: 'n' },
  { username_type: 'email', use_drf: 'n' },
] as const;

/** Bare module names a file imports ('fastify', '@fastify/static', 'node:fs' excluded). */
function importedPackages(source: string): string[] {
  // Not `--import` (a Node option the site test passes to start the server).
  const names = [...source.matchAll(/(?<![\w-])(?:from|import)\s*\(?\s*'([^'.][^']*)'/g)].map((match) => match[1]!);
  return names.filter((name) => !name.startsWith('node:')).map((name) => (name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!));
}

/** The example site's options: use_drf=y, every other option at its default. */
function isExampleSite(answers: { username_type: string; use_drf: string }): boolean {
  return answers.username_type === 'username' && answers.use_drf === 'y';
}

/** The combination packed.test.ts generates from the packed tarballs and runs the own tests of. */
function isPackedProject(answers: { username_type: string; use_drf: string }): boolean {
  return answers.username_type === 'email' && answers.use_drf === 'y';
}

/** A project's files less what differs between two generations: the library's path and the random values. */
function withoutInstallDetails(files: ReadonlyMap<string, string>): Map<string, string> {
  const kept = new Map(files);
  kept.delete('.envs/local.env');
  kept.delete('.envs/production.env');
  kept.set('package.json', kept.get('package.json')!.replace(/"@latchkey\/core": "[^"]*"/, '"@latchkey/core": "..."'));
  return kept;
}

describe.each(COMBINATIONS)('a project generated with username_type=$username_type use_drf=$use_drf', (answers) => {
  it('has every option applied, no marker left, and only the dependencies it uses', () => {
    const { files } = generateLinkedProject(answers);
    for (const [path, content] of files) expect(content, path).not.toContain('%%');

    const paths = [...files.keys()];
    const apiFiles = paths.filter((path) => path === 'src/users/api.ts' || path.startsWith('spa/') || path.includes('users-api') || path.includes('spa.test'));
    const manifest = JSON.parse(files.get('package.json')!) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    if (answers.use_drf === 'y') {
      expect(apiFiles.length).toBeGreaterThan(5);
      expect(manifest.dependencies).toHaveProperty('@fastify/static');
    } else {
      expect(apiFiles).toEqual([]);
      expect(manifest.dependencies).not.toHaveProperty('@fastify/static');
      for (const [path, content] of files) {
        if (path === 'README.md') continue;
        expect(content, path).not.toMatch(/registerUserApi|headless: true|\/api\/|_allauth/);
      }
    }
    if (answers.username_type === 'email') {
      // The user has no username at all: not in the code, the pages, the settings or the API.
      for (const [path, content] of files) {
        // USERNAME_TYPE, the setting that says so, is the one exception.
        const code = content.replace(/USERNAME_TYPE/g, '');
        if (path.startsWith('src/') || path.startsWith('templates/') || path.startsWith('spa/')) expect(code, path).not.toMatch(/username/i);
      }
    }
    expect(files.get('src/config/settings.ts')).toContain(`USERNAME_TYPE: '${answers.username_type}'`);
    expect(files.get('src/config/settings.ts')).toContain("LANGUAGE_CODE: 'en-us',\n    LANGUAGES: ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'],");

    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]);
    for (const [path, content] of files) {
      if (!/\.(ts|js)$/.test(path) || path.startsWith('spa/')) continue;
      for (const name of importedPackages(content)) expect(declared.has(name), `${path} imports ${name}`).toBe(true);
    }
    const declaredButUnused = [...Object.keys(manifest.dependencies)].filter(
      (name) => name !== 'tsx' && ![...files].some(([path, content]) => /\.(ts|js)$/.test(path) && importedPackages(content).includes(name)),
    );
    expect(declaredButUnused).toEqual([]);
  });

  it('passes its own npm test (type check, lint, suites; for the example site in the repository suite, for email with the API in packed.test.ts), then starts and answers', { timeout: 240_000 }, async () => {
    const { directory, files } = generateLinkedProject(answers);
    if (isExampleSite(answers)) {
      // This combination is examples/site, whose suites, type check and lint run in the
      // repository's own npm test (on SQLite and PostgreSQL): running them again here would only
      // cost time. What must hold is that it is the same project.
      expect(withoutInstallDetails(files)).toEqual(withoutInstallDetails(renderExampleSite()));
    } else if (!isPackedProject(answers)) {
      // (This combination's own npm test runs in packed.test.ts, installed from the tarballs.)
      await expectOwnTestsPass(directory);
    }


    const server = await startDev(directory);
    try {
      const get = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, { ...init, headers: { host: 'localhost:8000', ...init.headers } });
      expect((await get('/accounts/login/')).status).toBe(200);
      // The project's own words in the language asked for, from its catalogs (locale/).
      expect(await (await get('/', { headers: { 'accept-language': 'ja' } })).text()).toContain('<p>ログインしていません。</p>');
      const signup = await (await get('/accounts/signup/')).text();
      expect(signup).toContain('name="email"');
      if (answers.username_type === 'email') expect(signup).not.toContain('name="username"');
      else expect(signup).toContain('name="username"');
      const token = await get('/api/auth-token/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(token.status).toBe(answers.use_drf === 'y' ? 400 : 404);
      expect((await get('/_allauth/browser/v1/config')).status).toBe(answers.use_drf === 'y' ? 200 : 404);
      expect((await get('/users/~redirect/', { redirect: 'manual' })).headers.get('location')).toBe('/accounts/login/?next=%2Fusers%2F~redirect%2F');
    } finally {
      await server.stop();
    }
    expect(readFileSync(join(directory, '.gitignore'), 'utf8')).toContain('.envs/production.env');
  });
});

describe('a project generated with a language Latchkey does not ship (language_code=it-ch)', () => {
  it('offers Italian first, with a catalog of every message to translate, as its makemessages would write it', { timeout: 60_000 }, async () => {
    const { directory, files } = generateLinkedProject({ language_code: 'it-ch' });
    expect(files.get('src/config/settings.ts')).toContain("LANGUAGE_CODE: 'it-ch',\n    LANGUAGES: ['it', 'en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'],");
    const checked = await run(process.execPath, ['--import', 'tsx', 'src/manage.ts', 'makemessages', '--check'], directory);
    expect(checked.output).toContain('no catalog changed');
    expect(checked.code).toBe(0);
  });
});
