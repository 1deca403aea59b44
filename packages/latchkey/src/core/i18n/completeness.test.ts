/**
 * Latchkey's catalogs are complete (docs/translations.md): every visible text of the templates goes
 * through them, every message is in the catalogs as `npm run makemessages` writes them, every
 * shipped language translates every message, and no translation drops or adds a placeholder.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { po, type GetTextTranslation } from 'gettext-parser';
import { describe, expect, it } from 'vitest';
import { catalogFolders, SHIPPED_LANGUAGES } from './languages.js';
import { latchkeyCatalogSources } from './latchkey-sources.js';
import { makeMessages } from './make-messages.js';
import { placeholdersOf } from './message.js';

const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TEMPLATES = join(PACKAGE_ROOT, 'src', 'templates');
const sources = latchkeyCatalogSources(PACKAGE_ROOT);
const TRANSLATED = SHIPPED_LANGUAGES.filter((language) => language !== 'en');

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return templateFiles(path);
    return /\.(html|txt)$/.test(entry.name) ? [path] : [];
  });
}

/** Words that are the same in every language, or are no words: a brand, a unit, a separator. */
const NOT_WORDS = /^(?:UTC|Latchkey|OK|-+|·|×|—|\d+)$/;

/**
 * The text of a template a reader would see that is written in it directly rather than through
 * `_()`: what is left once comments, tags, expressions and statements are taken out, plus the
 * texts of the attributes people read (title, placeholder, alt, aria-label).
 */
function untranslatedText(template: string): string[] {
  const withoutCode = template
    .replace(/\{#[\s\S]*?#\}/g, ' ')
    .replace(/\{%[\s\S]*?%\}/g, ' ')
    .replace(/\{\{[\s\S]*?\}\}/g, ' ');
  const attributes = [...withoutCode.matchAll(/\b(?:title|placeholder|alt|aria-label)="([^"]*)"/g)].map((match) => match[1] as string);
  const text = withoutCode
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    // Attributes a template builds apart from their tag (`{% set described %} aria-invalid="true"{% endset %}`).
    .replace(/\b[\w-]+="[^"]*"/g, ' ')
    .replace(/&[a-z]+;|&#\d+;/g, ' ');
  return [...text.split(/\s+/), ...attributes.flatMap((value) => value.split(/\s+/))].filter((word) => /\p{L}/u.test(word) && !NOT_WORDS.test(word));
}

function translationsOf(language: string): GetTextTranslation[] {
  const file = join(sources.localeDir, catalogFolders(language)[0] as string, 'LC_MESSAGES', `${sources.domain}.po`);
  const catalog = po.parse(readFileSync(file));
  return Object.values(catalog.translations).flatMap((byId) => Object.values(byId)).filter((entry) => entry.msgid !== '');
}

describe("Latchkey's catalogs", () => {
  it('hold every visible text of the templates: none is written outside _(), ngettext() or pgettext()', () => {
    const leftovers = templateFiles(TEMPLATES).flatMap((file) => {
      const words = untranslatedText(readFileSync(file, 'utf8'));
      return words.length === 0 ? [] : [`${relative(TEMPLATES, file)}: ${words.slice(0, 8).join(' ')}`];
    });
    expect(leftovers).toEqual([]);
  });

  it('are what npm run makemessages writes, and every message is written in a form they can hold', () => {
    const made = makeMessages({ ...sources, languages: SHIPPED_LANGUAGES, check: true });
    expect(made.problems).toEqual([]);
    expect(made.changed, 'run npm run makemessages').toEqual([]);
    expect(made.messageCount).toBeGreaterThan(300);
  });

  it.each(TRANSLATED)('translate every message into %s, none of them fuzzy', (language) => {
    const missing = translationsOf(language)
      .filter((entry) => entry.msgstr.some((text) => text.trim() === '') || entry.comments?.flag?.includes('fuzzy'))
      .map((entry) => entry.msgid);
    expect(missing).toEqual([]);
  });

  it.each(TRANSLATED)('keep every placeholder in %s, and add none', (language) => {
    const wrong: string[] = [];
    for (const entry of translationsOf(language)) {
      const wanted = placeholdersOf(entry.msgid_plural === undefined ? entry.msgid : `${entry.msgid} ${entry.msgid_plural}`);
      entry.msgstr.forEach((text, form) => {
        const got = placeholdersOf(text);
        const extra = got.filter((name) => !wanted.includes(name));
        // A plural form may leave out the count ("one code", "two codes" in Arabic say it in words).
        const dropped = wanted.filter((name) => !got.includes(name) && !(entry.msgid_plural !== undefined && name === 'count'));
        if (text !== '' && (extra.length > 0 || dropped.length > 0)) wrong.push(`${entry.msgid} [${form}]: ${text}`);
      });
    }
    expect(wrong).toEqual([]);
  });
});
