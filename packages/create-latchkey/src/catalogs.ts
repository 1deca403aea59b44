/**
 * The project's translation catalogs (locale/, which the project's `npm run makemessages`
 * maintains). The template holds the catalog template and the catalogs of Latchkey's shipped
 * languages, translated; a language the project offers besides them (its language_code's) gets a
 * catalog written here, as makemessages would write a new one: every message, untranslated.
 */

/**
 * gettext's Plural-Forms of the languages a project is likeliest to add (gettext's manual, "Plural
 * forms"); any other starts with English's, as makemessages gives it, for the translator to correct.
 */
const PLURAL_FORMS: Readonly<Record<string, string>> = {
  en: 'nplurals=2; plural=(n != 1);',
  it: 'nplurals=2; plural=(n != 1);',
  nl: 'nplurals=2; plural=(n != 1);',
  pt: 'nplurals=2; plural=(n != 1);',
  zh: 'nplurals=1; plural=0;',
  ko: 'nplurals=1; plural=0;',
  ru: 'nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);',
  pl: 'nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);',
};

/**
 * A new language's catalog from the catalog template (`locale/messages.pot`): its header names the
 * language and its plural forms, and each message has an empty translation (one per plural form
 * for a message with a plural). `language` is a general language code (`it`), which is also its
 * folder's name.
 */
export function newLanguageCatalog(template: string, language: string): string {
  const pluralForms = PLURAL_FORMS[language] ?? PLURAL_FORMS.en!;
  const forms = Number(/nplurals=(\d+)/.exec(pluralForms)![1]);
  const pluralTranslations = Array.from({ length: forms }, (_, index) => `msgstr[${index}] ""`).join('\n');
  return template
    .replace('"Project-Id-Version: messages\\n"\n', `"Project-Id-Version: messages\\n"\n"Language: ${language}\\n"\n`)
    .replace('"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"', `"Plural-Forms: ${pluralForms}\\n"`)
    .replace(/^msgstr\[0\] ""(\nmsgstr\[\d+\] "")*$/gm, pluralTranslations);
}
