/**
 * The translation catalogs: gettext `.po` files (docs/translations.md), read once at start-up with
 * gettext-parser, and a Translator per language that looks messages up in them.
 *
 * Where a language's messages come from, first found wins:
 *   for each folder of the language, most specific first (`pt_BR`, then `pt`),
 *     the project's locale folders, in the order given, then Latchkey's own (`locale/`),
 *       every `.po` file in `<folder>/LC_MESSAGES/`.
 * So a project overrides any of Latchkey's translations by writing the same msgid in its own
 * catalog, and adds a language by adding a folder. A message no catalog translates is shown in
 * English, as gettext does; a fuzzy entry (a translation a merge guessed) is not used.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pluralFormsModule from '@tannin/plural-forms';
import { po } from 'gettext-parser';
import { catalogFolders, textDirection, type TextDirection } from './languages.js';
import { interpolate, type Message, type MessageParams } from './message.js';

/** Latchkey's own catalogs: `locale/` at the package's root (the same two levels up from src/ and dist/). */
export const LATCHKEY_LOCALE_DIR = fileURLToPath(new URL('../../../locale/', import.meta.url));

/**
 * @tannin/plural-forms compiles a Plural-Forms expression without eval. It is CommonJS with an ES
 * module's type declaration: Node gives its function as the default import, TypeScript expects
 * it one level down, so both are accepted.
 */
const pluralForms = ((pluralFormsModule as unknown as { default?: unknown }).default ?? pluralFormsModule) as (expression: string) => (count: number) => number;

/** gettext keys a message with a context as "context\u0004id". */
const CONTEXT_SEPARATOR = '\u0004';

const keyOf = (id: string, context: string | undefined): string => (context === undefined ? id : `${context}${CONTEXT_SEPARATOR}${id}`);

/** Chooses the plural form for a count: an index into a translation's forms. */
type PluralRule = (count: number) => number;

const ENGLISH_PLURAL: PluralRule = (count) => (count === 1 ? 0 : 1);

/** One language's messages as read from its catalogs. */
interface LanguageTable {
  readonly entries: ReadonlyMap<string, readonly string[]>;
  readonly plural: PluralRule;
}

export interface DateStyle {
  /** 'date' gives the day ("3 déc. 2026"); 'datetime' adds the time, in UTC as every stored time is. */
  readonly style: 'date' | 'datetime';
}

/** Messages in one language, for one request or one mail. */
export interface Translator {
  readonly language: string;
  readonly direction: TextDirection;
  gettext(id: string, params?: MessageParams): string;
  ngettext(singular: string, plural: string, count: number, params?: MessageParams): string;
  pgettext(context: string, id: string, params?: MessageParams): string;
  /** A message marked with msg()/nmsg()/pmsg(), or a message id given as a string. */
  translate(message: Message | string): string;
  formatDate(date: Date, style?: DateStyle['style']): string;
  formatNumber(value: number): string;
}

function readCatalogFiles(folder: string): { translations: ReturnType<typeof po.parse>; file: string }[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((name) => name.endsWith('.po'))
    .sort()
    .map((name) => ({ file: join(folder, name), translations: po.parse(readFileSync(join(folder, name))) }));
}

function pluralRuleOf(header: string | undefined, file: string): PluralRule | undefined {
  const expression = /plural\s*=\s*([^;]+)/.exec(header ?? '')?.[1];
  if (expression === undefined) return undefined;
  try {
    const evaluate = pluralForms(expression);
    return (count) => Number(evaluate(count));
  } catch {
    throw new Error(`${file}: its Plural-Forms header cannot be read: ${expression}`);
  }
}

function readLanguage(language: string, localeDirs: readonly string[]): LanguageTable {
  const entries = new Map<string, readonly string[]>();
  let plural: PluralRule | undefined;
  for (const folder of catalogFolders(language)) {
    for (const dir of localeDirs) {
      for (const { file, translations } of readCatalogFiles(join(dir, folder, 'LC_MESSAGES'))) {
        plural ??= pluralRuleOf(translations.headers['Plural-Forms'] ?? translations.headers['plural-forms'], file);
        for (const [context, messages] of Object.entries(translations.translations)) {
          for (const [id, entry] of Object.entries(messages)) {
            if (id === '' || entry.comments?.flag?.split(',').some((flag) => flag.trim() === 'fuzzy')) continue;
            if (entry.msgstr.every((text) => text === '')) continue;
            const key = keyOf(id, context === '' ? undefined : context);
            if (!entries.has(key)) entries.set(key, entry.msgstr);
          }
        }
      }
    }
  }
  return { entries, plural: plural ?? ENGLISH_PLURAL };
}

function createTranslator(language: string, table: LanguageTable): Translator {
  const dateFormats = {
    date: new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeZone: 'UTC' }),
    // Components rather than dateStyle, which cannot name the zone: every stored time is UTC, and the page says so.
    datetime: new Intl.DateTimeFormat(language, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC', timeZoneName: 'short' }),
  };
  const numbers = new Intl.NumberFormat(language);
  const lookup = (id: string, context: string | undefined): string => table.entries.get(keyOf(id, context))?.[0] || id;
  const lookupPlural = (singular: string, plural: string, count: number, context: string | undefined): string => {
    const forms = table.entries.get(keyOf(singular, context));
    if (forms === undefined) return count === 1 ? singular : plural;
    return forms[table.plural(count)] || forms[forms.length - 1] || plural;
  };
  const translator: Translator = {
    language,
    direction: textDirection(language),
    gettext: (id, params) => interpolate(lookup(id, undefined), params),
    ngettext: (singular, plural, count, params) => interpolate(lookupPlural(singular, plural, count, undefined), { count, ...params }),
    pgettext: (context, id, params) => interpolate(lookup(id, context), params),
    translate(message) {
      if (typeof message === 'string') return interpolate(lookup(message, undefined), undefined);
      const text = message.plural !== undefined && message.count !== undefined
        ? lookupPlural(message.id, message.plural, message.count, message.context)
        : lookup(message.id, message.context);
      return interpolate(text, message.params);
    },
    formatDate: (date, style = 'datetime') => dateFormats[style].format(date),
    formatNumber: (value) => numbers.format(value),
  };
  return translator;
}

/** Every offered language's translator, read from the catalogs once. */
export interface Catalogs {
  readonly languages: readonly string[];
  /** The translator for an offered language; any other code gets the first offered language's. */
  translator(language: string): Translator;
}

/**
 * Reads the catalogs of `languages` from the project's locale folders (first) and Latchkey's.
 * A `.po` file that cannot be parsed stops start-up naming the file.
 */
export function loadCatalogs(options: { languages: readonly string[]; localeDirs?: readonly string[] }): Catalogs {
  const dirs = [...(options.localeDirs ?? []), LATCHKEY_LOCALE_DIR];
  const translators = new Map<string, Translator>();
  for (const language of options.languages) translators.set(language, createTranslator(language, readLanguage(language, dirs)));
  const fallback = translators.get(options.languages[0] ?? 'en') ?? createTranslator('en', { entries: new Map(), plural: ENGLISH_PLURAL });
  return {
    languages: options.languages,
    translator: (language) => translators.get(language) ?? fallback,
  };
}
