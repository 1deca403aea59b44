import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runGenerator } from './cli.js';

function collector(): PassThrough & { text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return Object.assign(stream, { text: () => text });
}

function dependencies(project: string): Record<string, string> {
  return (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
}

/** Runs the generator in a fresh temporary directory; stdin is a terminal only when `typed` is given. */
async function generate(argv: string[], typed?: string[]) {
  const cwd = mkdtempSync(join(tmpdir(), 'lk-cli-'));
  const stdin = Object.assign(new PassThrough(), { isTTY: typed !== undefined });
  const stdout = collector();
  const stderr = collector();
  const running = runGenerator(argv, { cwd, stdin, stdout, stderr });
  if (typed) {
    // One answer per question, as a person types them after each prompt.
    for (const line of typed) {
      await new Promise((resolve) => setImmediate(resolve));
      stdin.write(`${line}\n`);
    }
  }
  const code = await running;
  return { code, cwd, out: stdout.text(), err: stderr.text() };
}

describe('the generator command', () => {
  it('without a terminal takes the defaults for what no flag gives, and prints the next steps', async () => {
    const result = await generate(['site', '--use-drf', 'y', '--project-name=Ada Shop']);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain('Created Ada Shop in site');
    expect(result.out).toContain('npm run dev');
    const manifest = JSON.parse(readFileSync(join(result.cwd, 'site', 'package.json'), 'utf8')) as { name: string };
    expect(manifest.name).toBe('ada-shop');
    expect(existsSync(join(result.cwd, 'site', 'src', 'users', 'api.ts'))).toBe(true);
    expect(readFileSync(join(result.cwd, 'site', 'src', 'config', 'settings.ts'), 'utf8')).toContain("USERNAME_TYPE: 'username'");
  });

  it('writes a copy of the library into vendor/ and depends on it, so that the project installs anywhere', async () => {
    const result = await generate(['site', '--yes']);
    expect(result.code).toBe(0);
    expect(result.out).toContain('@latchkey/core is in its vendor/ directory');
    expect(readdirSync(join(result.cwd, 'site', 'vendor'))).toEqual(['latchkey-core-0.1.0.tgz']);
    expect(dependencies(join(result.cwd, 'site'))).toMatchObject({ '@latchkey/core': 'file:vendor/latchkey-core-0.1.0.tgz' });
    const readme = readFileSync(join(result.cwd, 'site', 'README.md'), 'utf8');
    expect(readme).toContain('from `file:vendor/latchkey-core-0.1.0.tgz`');
    // How to leave the copy for the registry's, once published: for this project, and for a new one.
    expect(readme).toContain('`npm install @latchkey/core@<version>` (which rewrites `package.json`) and delete `vendor/`');
    expect(readme).toContain('`create-latchkey --latchkey-version <version>`');
  });

  it('with --latchkey-version depends on that version from the registry, and vendors nothing', async () => {
    const result = await generate(['site', '--yes', '--latchkey-version', '^0.1.0']);
    expect(result.code).toBe(0);
    expect(result.out).not.toContain('vendor/');
    expect(existsSync(join(result.cwd, 'site', 'vendor'))).toBe(false);
    expect(dependencies(join(result.cwd, 'site'))).toMatchObject({ '@latchkey/core': '^0.1.0' });
    expect(readFileSync(join(result.cwd, 'site', 'README.md'), 'utf8')).not.toContain('vendor/');
  });

  it('on a terminal asks each question not given by a flag, an empty answer taking the default shown', async () => {
    // Asked: project_name, project_slug, description, author_name, domain_name, email, language_code, use_drf.
    const result = await generate(['site', '--username-type', 'email'], ['Grace Labs', '', '', 'Grace', 'grace.example', '', 'fr', 'n']);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toContain('project_slug [grace-labs]: ');
    expect(result.out).toContain('email [you@grace.example]: ');
    expect(result.out).toContain('language_code (a language code such as en-us, fr or pt-br) [en-us]: ');
    expect(result.out).not.toContain('username_type');
    const settings = readFileSync(join(result.cwd, 'site', 'src', 'config', 'settings.ts'), 'utf8');
    expect(settings).toContain("USERNAME_TYPE: 'email'");
    expect(settings).toContain("LANGUAGE_CODE: 'fr',\n    LANGUAGES: ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'],");
    expect(settings).toContain("DOMAIN_NAME: 'grace.example'");
    expect(existsSync(join(result.cwd, 'site', 'src', 'users', 'api.ts'))).toBe(false);
  });

  it('with a language Latchkey does not ship, offers it first and writes its catalog, untranslated', async () => {
    const result = await generate(['site', '--yes', '--language-code', 'it_CH']);
    expect(result).toMatchObject({ code: 0, err: '' });
    const site = join(result.cwd, 'site');
    expect(readFileSync(join(site, 'src', 'config', 'settings.ts'), 'utf8')).toContain("LANGUAGE_CODE: 'it-ch',\n    LANGUAGES: ['it', 'en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'],");
    expect(readdirSync(join(site, 'locale')).sort()).toEqual(['ar', 'de', 'en', 'es', 'fr', 'it', 'ja', 'messages.pot', 'pt_BR']);
    const italian = readFileSync(join(site, 'locale', 'it', 'LC_MESSAGES', 'messages.po'), 'utf8');
    expect(italian).toContain('"Language: it\\n"\n');
    expect(italian).toContain('msgid "Your profile"\nmsgstr ""\n');
  });

  it('with --yes asks nothing, even on a terminal', async () => {
    const result = await generate(['site', '--yes'], []);
    expect(result.code).toBe(0);
    expect(result.out).not.toContain('[');
  });

  it.each([
    [['site', '--username-type', 'phone'], 'Error: username_type "phone" is not allowed: use username or email.\n'],
    [['site', '--project-slug', 'Not A Slug'], /^Error: project_slug "Not A Slug" is not allowed: .*\n$/],
    [['site', '--language-code', 'French'], 'Error: language_code "French" is not allowed: use a language code such as en-us, fr or pt-br.\n'],
    [['site', '--colour', 'blue'], /^Error: unknown option --colour; allowed: --project-name, .*--yes, --help\.\n$/],
    [['site', '--use-drf'], 'Error: --use-drf needs a value (y for the API layer, anything else for none).\n'],
    [['site', '--latchkey-version', 'file:../evil'], 'Error: --latchkey-version "file:../evil" is not allowed: give a version or range such as 0.1.0, ^0.1.0 or ~0.1.0, or latest.\n'],
    [['site', '--latchkey-version'], 'Error: --latchkey-version needs a value (a version).\n'],
    [[], 'Error: give exactly one target directory (got 0); see --help.\n'],
  ])('refuses %j with one line and writes nothing', async (argv, message) => {
    const result = await generate(argv);
    expect(result.code).toBe(1);
    expect(result.out).toBe('');
    if (typeof message === 'string') expect(result.err).toBe(message);
    else expect(result.err).toMatch(message);
    expect(readdirSync(result.cwd)).toEqual([]);
  });

  it('refuses a directory that is not empty, leaving it as it was', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'lk-cli-'));
    mkdirSync(join(cwd, 'site'));
    writeFileSync(join(cwd, 'site', 'notes.txt'), 'mine');
    const stderr = collector();
    const code = await runGenerator(['site', '--yes'], { cwd, stdin: new PassThrough(), stdout: collector(), stderr });
    expect(code).toBe(1);
    expect(stderr.text()).toBe('Error: site exists and is not an empty directory; choose a new or empty one.\n');
    expect(readdirSync(join(cwd, 'site'))).toEqual(['notes.txt']);
    expect(readdirSync(cwd)).toEqual(['site']);
  });

  it('fills an existing empty directory', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'lk-cli-'));
    mkdirSync(join(cwd, 'site'));
    const code = await runGenerator(['site'], { cwd, stdin: new PassThrough(), stdout: collector(), stderr: collector() });
    expect(code).toBe(0);
    expect(readdirSync(join(cwd, 'site'))).toContain('package.json');
    expect(readdirSync(cwd)).toEqual(['site']);
  });

  it('prints its usage for --help', async () => {
    const result = await generate(['--help']);
    expect(result.code).toBe(0);
    expect(result.out).toContain('Usage: create-latchkey <directory> [options]');
    expect(result.out).toContain('--username-type <username or email>');
  });
});
