import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHIPPED_LANGUAGES, type ProjectOptions } from './options.js';
import { isVendoredDependency } from './library.js';
import { newLanguageCatalog } from './catalogs.js';
import { renderTemplate } from './render.js';

/** The project's files as templates (src/render.ts describes the markers). */
export const TEMPLATE_DIRECTORY = fileURLToPath(new URL('../template/', import.meta.url));
/** Files that exist only with the API layer (use_drf=y): a prefix ending in "/" names a directory. */
const API_ONLY = ['src/users/api.ts', 'test/users-api.test.ts', 'test/spa.test.ts', 'spa/'];

/**
 * Files stored under another name: npm leaves ".gitignore" out of a published package, and a
 * template whose name starts with a dot is easy to miss.
 */
const RENAMED: Readonly<Record<string, string>> = { _gitignore: '.gitignore', _envs: '.envs' };

/** The values made fresh for every project; tests and the example site pass them in. */
export interface RandomValues {
  /** LATCHKEY_SECRET_KEY of the local environment file. */
  localSecretKey: string;
  /** LATCHKEY_SECRET_KEY of the production environment file. */
  productionSecretKey: string;
  /** LATCHKEY_ADMIN_URL of the production environment file: an admin area at an unguessable path. */
  adminUrl: string;
}

export function freshRandomValues(): RandomValues {
  const token = (bytes: number) => randomBytes(bytes).toString('base64url');
  return { localSecretKey: token(48), productionSecretKey: token(48), adminUrl: `${token(24)}/` };
}

/** Every file of the project, path (with "/") to content, rendered in memory. */
export function renderProject(options: ProjectOptions, random: RandomValues, latchkeyDependency: string): Map<string, string> {
  const values = {
    project_name: options.projectName,
    project_slug: options.projectSlug,
    description: options.description,
    author_name: options.authorName,
    domain_name: options.domainName,
    email: options.email,
    username_type: options.usernameType,
    language_code: options.languageCode,
    // LANGUAGES as the settings file writes the list: 'en', 'fr', ...
    languages: options.languages.map((language) => `'${language}'`).join(', '),
    latchkey_dependency: latchkeyDependency,
    local_secret_key: random.localSecretKey,
    production_secret_key: random.productionSecretKey,
    admin_url: random.adminUrl,
  };
  const flags = {
    use_drf: options.useDrf,
    username: options.usernameType === 'username',
    email: options.usernameType === 'email',
    vendored_library: isVendoredDependency(latchkeyDependency),
  };
  const files = new Map<string, string>();
  for (const templatePath of templateFiles(TEMPLATE_DIRECTORY)) {
    const path = templatePath
      .split('/')
      .map((part) => RENAMED[part] ?? part)
      .join('/');
    if (!options.useDrf && API_ONLY.some((prefix) => path === prefix || (prefix.endsWith('/') && path.startsWith(prefix)))) continue;
    files.set(path, renderTemplate(readFileSync(join(TEMPLATE_DIRECTORY, templatePath), 'utf8'), values, flags, templatePath));
  }
  // The template holds the catalogs of Latchkey's languages; one the project offers besides them
  // (language_code's) starts as `npm run makemessages` would write it: every message, untranslated.
  for (const language of options.languages) {
    if (SHIPPED_LANGUAGES.includes(language)) continue;
    files.set(`locale/${language}/LC_MESSAGES/messages.po`, newLanguageCatalog(files.get('locale/messages.pot')!, language));
  }
  return files;
}

function templateFiles(root: string, prefix = ''): string[] {
  return readdirSync(join(root, prefix), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      return entry.isDirectory() ? templateFiles(root, path) : [path];
    });
}

/** Whether a directory may receive a project: it does not exist yet, or it is empty. */
export function isUsableTarget(directory: string): boolean {
  if (!existsSync(directory)) return true;
  return statSync(directory).isDirectory() && readdirSync(directory).length === 0;
}

/**
 * Writes the files into a fresh directory beside the target, then renames it into place, so that
 * a failure halfway (a full disk) leaves no half-written project behind.
 */
export function writeProject(targetDirectory: string, files: ReadonlyMap<string, string | Uint8Array>): void {
  const target = resolve(targetDirectory);
  mkdirSync(dirname(target), { recursive: true });
  const staging = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.partial`);
  try {
    for (const [path, content] of files) {
      const file = join(staging, ...path.split('/'));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
    if (existsSync(target)) rmdirSync(target);
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}
