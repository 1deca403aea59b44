/**
 * `makemessages` (Django's): extracts every message id from a tree of code and templates into the
 * catalog template, and merges it into each language's catalog (catalog-files.ts). Latchkey's own
 * catalogs are made by it (packages/latchkey/scripts/makemessages.ts), and so are a project's
 * (`manage makemessages`), each from its own files.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { catalogTemplate, mergeCatalog } from './catalog-files.js';
import { extractFromCode, extractFromTemplate, type Extraction } from './extract.js';
import { catalogFolders } from './languages.js';

export interface MakeMessagesOptions {
  /** The folder references are relative to (the package's or the project's root). */
  root: string;
  /** Folders of TypeScript (or JavaScript) to read; test files (`*.test.ts`) are skipped. */
  codeDirs: readonly string[];
  /** Folders of templates (`.html`, `.txt`). */
  templateDirs: readonly string[];
  /** Folders under the code folders not to read as code (the CLI's, whose words stay English; the templates, read as templates). */
  skipDirs?: readonly string[];
  /** Where the catalogs go: `<localeDir>/<domain>.pot` and `<localeDir>/<folder>/LC_MESSAGES/<domain>.po`. */
  localeDir: string;
  domain: string;
  languages: readonly string[];
  /** Keeps an id no longer extracted in the language catalogs (a project's override of Latchkey's). */
  keep?: (id: string, context: string | undefined) => boolean;
  /** Writes nothing; reports which files would change. */
  check?: boolean;
}

export interface MadeMessages {
  /** The catalog files written (or, with check, that would change), relative to root. */
  changed: string[];
  /** Visible messages the catalogs cannot hold as written (extract.ts); nothing is written while there are any. */
  problems: string[];
  messageCount: number;
}

function filesUnder(dir: string, accept: (name: string) => boolean, skip: ReadonlySet<string>): string[] {
  if (!existsSync(dir) || skip.has(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path, accept, skip));
    else if (accept(entry.name)) found.push(path);
  }
  return found;
}

const isCode = (name: string): boolean => /\.(ts|js|mjs)$/.test(name) && !/\.(test|d)\.ts$/.test(name);
const isTemplate = (name: string): boolean => /\.(html|txt)$/.test(name);

/** Every message of the tree, and every problem. */
export function extractMessages(options: Pick<MakeMessagesOptions, 'root' | 'codeDirs' | 'templateDirs' | 'skipDirs'>): Extraction {
  const extraction: Extraction = { messages: [], problems: [] };
  const skip = new Set(options.skipDirs ?? []);
  const reference = (file: string) => relative(options.root, file).split(sep).join('/');
  for (const dir of options.codeDirs) for (const file of filesUnder(dir, isCode, skip)) extractFromCode(readFileSync(file, 'utf8'), reference(file), extraction);
  for (const dir of options.templateDirs) for (const file of filesUnder(dir, isTemplate, new Set())) extractFromTemplate(readFileSync(file, 'utf8'), reference(file), extraction);
  return extraction;
}

export function makeMessages(options: MakeMessagesOptions): MadeMessages {
  const { messages, problems } = extractMessages(options);
  if (problems.length > 0) return { changed: [], problems, messageCount: 0 };
  const outputs = new Map<string, string>();
  outputs.set(join(options.localeDir, `${options.domain}.pot`), catalogTemplate(messages, options.domain));
  for (const language of options.languages) {
    const file = join(options.localeDir, catalogFolders(language)[0] as string, 'LC_MESSAGES', `${options.domain}.po`);
    const existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    outputs.set(file, mergeCatalog(messages, existing, language, options.domain, options.keep));
  }
  const changed: string[] = [];
  for (const [file, text] of outputs) {
    if (existsSync(file) && readFileSync(file, 'utf8') === text) continue;
    changed.push(relative(options.root, file).split(sep).join('/'));
    if (options.check) continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  const ids = new Set(messages.map((message) => `${message.context ?? ''}\u0004${message.id}`));
  return { changed, problems, messageCount: ids.size };
}
