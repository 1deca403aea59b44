/**
 * The project's catalogs as the generator writes them (template/locale/): complete in every
 * language Latchkey ships, for every combination of the options. That they hold exactly the
 * project's messages is the project's own test (template/test/translations.test.ts: makemessages
 * --check), which runs for every combination; `npm run generate:catalogs` brings them up to date.
 */
import { describe, expect, it } from 'vitest';
import { renderProject } from '../src/generate.js';
import { optionsFrom, SHIPPED_LANGUAGES, withDefaults } from '../src/options.js';
import { FIXED_RANDOM } from './projects.js';

/** `{name}` placeholders of a text, sorted. */
const placeholders = (text: string): string[] => [...new Set([...text.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1]!))].sort();

/** A catalog's messages (makemessages writes each id and translation on one line): id, and its translations. */
function messagesOf(catalog: string): { id: string; translations: string[] }[] {
  return catalog
    .split('\n\n')
    .slice(1)
    .filter((entry) => entry.trim() !== '')
    .map((entry) => ({
      id: /^msgid "(.*)"$/m.exec(entry)![1]!,
      translations: [...entry.matchAll(/^msgstr(?:\[\d+\])? "(.*)"$/gm)].map((match) => match[1]!),
    }));
}

describe.each([
  { username_type: 'username', use_drf: 'y' },
  { username_type: 'email', use_drf: 'y' },
  { username_type: 'username', use_drf: 'n' },
  { username_type: 'email', use_drf: 'n' },
])("the catalogs of a project generated with username_type=$username_type use_drf=$use_drf", (answers) => {
  const files = renderProject(optionsFrom(withDefaults(answers)), FIXED_RANDOM, '^0.1.0');
  const template = messagesOf(files.get('locale/messages.pot')!);

  it('hold a catalog for each of Latchkey\'s languages, and no other', () => {
    const catalogs = [...files.keys()].filter((path) => path.startsWith('locale/')).sort();
    expect(catalogs).toEqual(['locale/messages.pot', ...['ar', 'de', 'en', 'es', 'fr', 'ja', 'pt_BR'].map((folder) => `locale/${folder}/LC_MESSAGES/messages.po`)].sort());
    expect(template.length).toBeGreaterThan(20);
  });

  it.each(SHIPPED_LANGUAGES.filter((language) => language !== 'en'))('translate every message into %s, keeping its placeholders', (language) => {
    const folder = language === 'pt-br' ? 'pt_BR' : language;
    const messages = messagesOf(files.get(`locale/${folder}/LC_MESSAGES/messages.po`)!);
    expect(messages.map((message) => message.id)).toEqual(template.map((message) => message.id));
    for (const { id, translations } of messages) {
      for (const translation of translations) {
        expect(translation, id).not.toBe('');
        expect(placeholders(translation), id).toEqual(placeholders(id));
      }
    }
  });

  it('leave English untranslated: the message ids are its text', () => {
    expect(messagesOf(files.get('locale/en/LC_MESSAGES/messages.po')!).flatMap((message) => message.translations).every((text) => text === '')).toBe(true);
  });
});
