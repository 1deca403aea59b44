import { describe, expect, it } from 'vitest';
import { newLanguageCatalog } from './catalogs.js';
import { renderTemplate } from './render.js';
import { COMBINATIONS, mergeVariants, type Combination } from './template-catalogs.js';

/** A merged catalog as the generator renders it for a combination. */
function render(template: string, combination: Combination): string {
  return renderTemplate(template, {}, { username: combination.username, email: !combination.username, use_drf: combination.useDrf });
}

const TEMPLATE = `msgid ""
msgstr ""
"Project-Id-Version: messages\\n"
"Content-Type: text/plain; charset=utf-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"

#: templates/pages/home.html
msgid "Home"
msgstr ""

#: src/orders.ts
#, python-brace-format
msgid "{count} order"
msgid_plural "{count} orders"
msgstr[0] ""
msgstr[1] ""
`;

describe("a language's new catalog", () => {
  it('is the template with the language and its plural forms, every message untranslated, as makemessages writes one', () => {
    expect(newLanguageCatalog(TEMPLATE, 'ru')).toBe(`msgid ""
msgstr ""
"Project-Id-Version: messages\\n"
"Language: ru\\n"
"Content-Type: text/plain; charset=utf-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\\n"

#: templates/pages/home.html
msgid "Home"
msgstr ""

#: src/orders.ts
#, python-brace-format
msgid "{count} order"
msgid_plural "{count} orders"
msgstr[0] ""
msgstr[1] ""
msgstr[2] ""
`);
  });

  it("takes English's plural forms for a language it does not know, as makemessages does", () => {
    expect(newLanguageCatalog(TEMPLATE, 'tr')).toContain('"Language: tr\\n"\n"Content-Type');
    expect(newLanguageCatalog(TEMPLATE, 'tr')).toContain('"Plural-Forms: nplurals=2; plural=(n != 1);\\n"');
    expect(newLanguageCatalog(TEMPLATE, 'zh')).toContain('msgid_plural "{count} orders"\nmsgstr[0] ""\n');
  });
});

describe("the template's catalogs, merged from every combination's", () => {
  const header = 'msgid ""\nmsgstr ""\n"Language: fr\\n"';
  const entry = (id: string, file = 'templates/users/user_detail.html') => `#: ${file}\nmsgid "${id}"\nmsgstr "${id.toUpperCase()}"`;
  const catalog = (...entries: string[]) => `${[header, ...entries].join('\n\n')}\n`;

  it('render, for each combination, exactly its catalog', () => {
    const [usernameApi, emailApi, usernamePages, emailPages] = COMBINATIONS as [Combination, Combination, Combination, Combination];
    const variants = new Map<Combination, string>([
      [usernameApi, catalog(entry('a'), entry('email'), entry('n', 'src/users/api.ts\n#: src/users/pages.ts'), entry('z'))],
      [emailApi, catalog(entry('a'), entry('n', 'src/users/api.ts\n#: src/users/pages.ts'), entry('token'), entry('z'))],
      [usernamePages, catalog(entry('a'), entry('email'), entry('n', 'src/users/pages.ts'), entry('z'))],
      [emailPages, catalog(entry('a'), entry('n', 'src/users/pages.ts'), entry('z'))],
    ]);
    const merged = mergeVariants(variants);
    expect(merged).toContain('%% if username %%\n\n#: templates/users/user_detail.html\nmsgid "email"');
    expect(merged).toContain('%% if use_drf %%\n\n#: src/users/api.ts');
    expect(merged).toContain('%% if email %%\n%% if use_drf %%\n\n#: templates/users/user_detail.html\nmsgid "token"');
    for (const [combination, text] of variants) expect(render(merged, combination)).toBe(text);
  });

  it('refuse catalogs whose headers differ', () => {
    const [first, second] = COMBINATIONS as [Combination, Combination];
    expect(() => mergeVariants(new Map<Combination, string>([[first, catalog()], [second, catalog().replace('fr', 'de')]]))).toThrow('different headers');
  });
});
