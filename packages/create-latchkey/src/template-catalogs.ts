/**
 * The template's catalogs (template/locale/), kept as the generated projects' `makemessages` writes
 * them: `npm run generate:catalogs` generates the project for every combination of username_type
 * and use_drf, runs its `manage makemessages` (which keeps the translations the template holds and
 * adds every new message untranslated), and writes each catalog back into the template, a message
 * that only some combinations have between `%% if %%` lines. Translations are then written in
 * template/locale/<language>/LC_MESSAGES/messages.po, by hand.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { REPOSITORY_ROOT } from './example-site.js';
import { renderProject, writeProject } from './generate.js';
import { optionsFrom, withDefaults } from './options.js';

/** What a catalog may differ by between combinations: the template's flags that follow them. */
export interface Combination {
  username: boolean;
  useDrf: boolean;
}

export const COMBINATIONS: readonly Combination[] = [
  { username: true, useDrf: true },
  { username: false, useDrf: true },
  { username: true, useDrf: false },
  { username: false, useDrf: false },
];

const FIXED_RANDOM = { localSecretKey: 'catalogs', productionSecretKey: 'catalogs', adminUrl: 'admin/' };

function filesUnder(root: string, directory = root): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(root, join(directory, entry.name)) : [relative(root, join(directory, entry.name)).split(sep).join('/')],
  );
}

/**
 * The catalogs a project of each combination holds after its `manage makemessages`, path (under
 * locale/) to text. The projects run against this repository's library (its built dist/).
 */
export function catalogsAfterMakemessages(): Map<Combination, Map<string, string>> {
  const catalogs = new Map<Combination, Map<string, string>>();
  for (const combination of COMBINATIONS) {
    const answers = withDefaults({ username_type: combination.username ? 'username' : 'email', use_drf: combination.useDrf ? 'y' : 'n' });
    const directory = join(mkdtempSync(join(tmpdir(), 'lk-catalogs-')), 'project');
    try {
      writeProject(directory, renderProject(optionsFrom(answers), FIXED_RANDOM, '^0.1.0'));
      symlinkSync(join(REPOSITORY_ROOT, 'node_modules'), join(directory, 'node_modules'), 'dir');
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') && name !== 'NODE_ENV' && name !== 'INIT_CWD'));
      execFileSync(process.execPath, ['--import', 'tsx', 'src/manage.ts', 'makemessages'], { cwd: directory, env, stdio: ['ignore', 'ignore', 'inherit'] });
      const locale = join(directory, 'locale');
      catalogs.set(combination, new Map(filesUnder(locale).map((path) => [path, readFileSync(join(locale, path), 'utf8')])));
    } finally {
      rmSync(join(directory, '..'), { recursive: true, force: true });
    }
  }
  return catalogs;
}

/**
 * A catalog as its header, its entries (the blocks between blank lines, each with what identifies
 * it) and the line ends after the last one.
 */
function entriesOf(text: string): { header: string; entries: { key: string; text: string }[]; end: string } {
  const end = /\n*$/.exec(text)![0];
  const [header = '', ...blocks] = text.slice(0, text.length - end.length).split('\n\n');
  const entries = blocks.map((block) => ({ key: block.split('\n').filter((line) => /^(msgctxt|msgid) /.test(line)).join('\n'), text: block }));
  return { header, entries, end };
}

/** The `%% if %%` lines that keep a block for exactly these combinations (each group of the result is one block's). */
function conditionsFor(combinations: readonly Combination[]): { open: string[]; close: string[] }[] {
  const has = (username: boolean, useDrf: boolean) => combinations.some((c) => c.username === username && c.useDrf === useDrf);
  const groups: { open: string[]; close: string[] }[] = [];
  const byUsername = [true, false].map((username) => ({ username, drf: [true, false].filter((useDrf) => has(username, useDrf)) }));
  const [withUsername, withEmail] = byUsername as [(typeof byUsername)[0], (typeof byUsername)[0]];
  const drfCondition = (drf: boolean[]) => (drf.length === 2 ? [] : drf[0] ? ['%% if use_drf %%'] : ['%% if not use_drf %%']);
  if (withUsername.drf.length > 0 && withEmail.drf.length > 0 && withUsername.drf.join() === withEmail.drf.join()) {
    const open = drfCondition(withUsername.drf);
    return [{ open, close: open.map(() => '%% endif %%') }];
  }
  for (const { username, drf } of byUsername) {
    if (drf.length === 0) continue;
    const open = [username ? '%% if username %%' : '%% if email %%', ...drfCondition(drf)];
    groups.push({ open, close: open.map(() => '%% endif %%') });
  }
  return groups;
}

/**
 * One template of a catalog that renders, for each combination, that combination's text: the
 * entries all of them have as they are, the others between `%% if %%` lines. Every combination's
 * entries come in the same order (makemessages sorts them), so the union keeps it.
 */
export function mergeVariants(variants: ReadonlyMap<Combination, string>): string {
  const parsed = [...variants].map(([combination, text]) => ({ combination, ...entriesOf(text) }));
  const headers = new Set(parsed.map((variant) => variant.header));
  if (headers.size !== 1) throw new Error(`the combinations' catalogs have different headers:\n${[...headers].join('\n---\n')}`);
  const ends = new Set(parsed.map((variant) => variant.end));
  if (ends.size !== 1) throw new Error("the combinations' catalogs end differently");
  const keys: string[] = [];
  for (const variant of parsed) {
    let previous = -1;
    for (const { key } of variant.entries) {
      const index = keys.indexOf(key);
      if (index === -1) keys.splice(++previous, 0, key);
      else previous = index;
    }
  }
  const lines = [...headers][0]!.split('\n');
  for (const key of keys) {
    const byText = new Map<string, Combination[]>();
    for (const variant of parsed) {
      const entry = variant.entries.find((candidate) => candidate.key === key);
      if (entry) byText.set(entry.text, [...(byText.get(entry.text) ?? []), variant.combination]);
    }
    for (const [text, combinations] of byText) {
      for (const { open, close } of conditionsFor(combinations)) lines.push(...open, '', ...text.split('\n'), ...close);
    }
  }
  return `${lines.join('\n')}${[...ends][0]!}`;
}

/** The template's catalogs as they should be: path (under template/locale/) to template text. */
export function templateCatalogs(catalogs: ReadonlyMap<Combination, ReadonlyMap<string, string>>): Map<string, string> {
  const paths = new Set([...catalogs.values()].flatMap((files) => [...files.keys()]));
  const merged = new Map<string, string>();
  for (const path of [...paths].sort()) {
    const variants = new Map<Combination, string>();
    for (const [combination, files] of catalogs) {
      const text = files.get(path);
      if (text === undefined) throw new Error(`locale/${path} is missing from a combination's catalogs`);
      variants.set(combination, text);
    }
    merged.set(path, mergeVariants(variants));
  }
  return merged;
}

/** The messages of a catalog without a translation (msgid, or msgctxt and msgid). */
export function untranslated(catalog: string): string[] {
  return entriesOf(catalog)
    .entries.filter(({ text }) => /^msgstr(\[\d+\])? ""$/m.test(text))
    .map(({ key }) => key.replace(/\n/g, ' '));
}
