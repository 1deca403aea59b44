/**
 * The catalog files `makemessages` writes (docs/translations.md), in gettext's formats so that
 * translators' tools read them (Poedit, Weblate, Crowdin, Transifex): the template of every
 * message id (`<domain>.pot`) and one `.po` per language, merged as msgmerge does: a translation
 * of an id that is still used is kept, a new id gets an empty one, an id no longer used is dropped.
 *
 * The output depends on the sources alone: no dates, and references name files without line
 * numbers, so running it twice on a clean tree changes nothing and an edit elsewhere in a file
 * does not rewrite the catalogs.
 */
import { po, type GetTextTranslation, type GetTextTranslations } from 'gettext-parser';
import type { ExtractedMessage } from './extract.js';
import { catalogFolders } from './languages.js';
import { placeholdersOf } from './message.js';

/** Plural-Forms of the languages Latchkey ships, and of English (gettext's manual, "Plural forms"). */
const PLURAL_FORMS: Readonly<Record<string, string>> = {
  en: 'nplurals=2; plural=(n != 1);',
  fr: 'nplurals=2; plural=(n > 1);',
  de: 'nplurals=2; plural=(n != 1);',
  es: 'nplurals=2; plural=(n != 1);',
  pt_BR: 'nplurals=2; plural=(n > 1);',
  pt: 'nplurals=2; plural=(n != 1);',
  it: 'nplurals=2; plural=(n != 1);',
  nl: 'nplurals=2; plural=(n != 1);',
  ja: 'nplurals=1; plural=0;',
  zh: 'nplurals=1; plural=0;',
  ko: 'nplurals=1; plural=0;',
  ru: 'nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);',
  pl: 'nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);',
  ar: 'nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5);',
};

/** The Plural-Forms header of a new catalog for `language`: gettext's for the known ones, else English's (the translator corrects it). */
export function pluralFormsOf(language: string): string {
  for (const folder of catalogFolders(language)) {
    const forms = PLURAL_FORMS[folder];
    if (forms !== undefined) return forms;
  }
  return PLURAL_FORMS.en as string;
}

const countOf = (pluralForms: string): number => Number(/nplurals\s*=\s*(\d+)/.exec(pluralForms)?.[1] ?? 2);

interface TemplateEntry {
  id: string;
  plural?: string;
  context?: string;
  files: Set<string>;
}

/** One entry per (context, id), with every file that uses it; sorted, so the file never depends on the walk's order. */
function collect(messages: readonly ExtractedMessage[]): TemplateEntry[] {
  const entries = new Map<string, TemplateEntry>();
  for (const message of messages) {
    if (message.id === '') continue;
    const key = `${message.context ?? ''}\u0004${message.id}`;
    const entry = entries.get(key) ?? { id: message.id, context: message.context, files: new Set<string>() };
    if (message.plural !== undefined) entry.plural = message.plural;
    entry.files.add(message.file);
    entries.set(key, entry);
  }
  return [...entries.values()].sort((a, b) => (a.context ?? '').localeCompare(b.context ?? '') || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function translationOf(entry: TemplateEntry, msgstr: string[]): GetTextTranslation {
  const flags = placeholdersOf(entry.id).length > 0 || (entry.plural !== undefined && placeholdersOf(entry.plural).length > 0) ? 'python-brace-format' : undefined;
  return {
    ...(entry.context === undefined ? {} : { msgctxt: entry.context }),
    msgid: entry.id,
    ...(entry.plural === undefined ? {} : { msgid_plural: entry.plural }),
    msgstr,
    comments: { reference: [...entry.files].sort().join('\n'), ...(flags === undefined ? {} : { flag: flags }) },
  };
}

function table(headers: Record<string, string>, translations: GetTextTranslation[]): GetTextTranslations {
  const byContext: GetTextTranslations['translations'] = { '': { '': { msgid: '', msgstr: [''] } } };
  for (const translation of translations) (byContext[translation.msgctxt ?? ''] ??= {})[translation.msgid] = translation;
  return { charset: 'utf-8', headers, translations: byContext };
}

const compile = (data: GetTextTranslations): string => `${po.compile(data, { foldLength: 0, sort: false }).toString('utf8')}\n`;

/** The catalog template (`.pot`): every message id, with no translation. */
export function catalogTemplate(messages: readonly ExtractedMessage[], project: string): string {
  const entries = collect(messages);
  const headers = { 'Project-Id-Version': project, 'Content-Type': 'text/plain; charset=UTF-8', 'Content-Transfer-Encoding': '8bit', 'Plural-Forms': 'nplurals=INTEGER; plural=EXPRESSION;' };
  return compile(table(headers, entries.map((entry) => translationOf(entry, entry.plural === undefined ? [''] : ['', '']))));
}

/**
 * A language's catalog after merging the ids of `messages` into `existing` (its current text, or
 * undefined for a new language). `keep` says whether an id no longer extracted stays (a project's
 * override of one of Latchkey's messages does).
 */
export function mergeCatalog(messages: readonly ExtractedMessage[], existing: string | undefined, language: string, project: string, keep: (id: string, context: string | undefined) => boolean = () => false): string {
  const current = existing === undefined ? undefined : po.parse(existing);
  const pluralForms = current?.headers['Plural-Forms'] ?? pluralFormsOf(language);
  const forms = countOf(pluralForms);
  const headers = {
    'Project-Id-Version': project,
    Language: catalogFolders(language)[0] as string,
    'Content-Type': 'text/plain; charset=UTF-8',
    'Content-Transfer-Encoding': '8bit',
    'Plural-Forms': pluralForms,
  };
  const known = (id: string, context: string | undefined) => current?.translations[context ?? '']?.[id];
  const entries = collect(messages);
  const merged: GetTextTranslation[] = entries.map((entry) => {
    const before = known(entry.id, entry.context);
    const empty = entry.plural === undefined ? [''] : Array.from({ length: forms }, () => '');
    const msgstr = before === undefined || (before.msgid_plural === undefined) !== (entry.plural === undefined) ? empty : before.msgstr;
    const translation = translationOf(entry, msgstr);
    // The translator's own comments and a fuzzy mark stay with the entry.
    const flag = [translation.comments?.flag, before?.comments?.flag?.includes('fuzzy') ? 'fuzzy' : undefined].filter(Boolean).join(', ');
    return { ...translation, comments: { ...translation.comments, ...(before?.comments?.translator ? { translator: before.comments.translator } : {}), ...(flag === '' ? {} : { flag }) } };
  });
  const extracted = new Set(entries.map((entry) => `${entry.context ?? ''}\u0004${entry.id}`));
  for (const [context, byId] of Object.entries(current?.translations ?? {})) {
    for (const [id, translation] of Object.entries(byId)) {
      if (id === '' || extracted.has(`${context}\u0004${id}`)) continue;
      if (keep(id, context === '' ? undefined : context)) merged.push(translation);
    }
  }
  return compile(table(headers, merged));
}
