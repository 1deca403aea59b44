import { describe, expect, it } from 'vitest';
import { extractFromCode, extractFromTemplate, type Extraction } from './extract.js';
import { catalogTemplate, mergeCatalog } from './catalog-files.js';

const empty = (): Extraction => ({ messages: [], problems: [] });

describe('makemessages finds the messages', () => {
  it('in templates: _(), ngettext() and pgettext() with literals, not values or comments', () => {
    const found = empty();
    extractFromTemplate('{# _("not this") #}<h1>{{ _(title) }}</h1><p>{{ _("Hello {name}", { name: n }) }} {{ ngettext("{count} code", "{count} codes", n) }} {{ pgettext("navigation", \'Email\') }}</p>', 'a.html', found);
    expect(found.messages).toEqual([
      { id: 'Hello {name}', file: 'a.html' },
      { id: '{count} code', plural: '{count} codes', file: 'a.html' },
      { id: 'Email', context: 'navigation', file: 'a.html' },
    ]);
    expect(found.problems).toEqual([]);
  });

  it("in code: marked messages and LatchkeyError's literal messages; operators' messages stay out", () => {
    const found = empty();
    extractFromCode(
      [
        "// msg('a comment')",
        "const TAKEN = msg('That name is taken.');",
        "throw new LatchkeyError('incorrect_code', 'Incorrect code.', { param: 'code' });",
        "throw new LatchkeyError('configuration_invalid', `SITE_URL=${url} is wrong.`);",
        "throw new LatchkeyError('rate_limited', nmsg('Try again in {count} second.', 'Try again in {count} seconds.', wait));",
        "const id = msgid(\"It's a \\\"quote\\\".\");",
      ].join('\n'),
      'b.ts',
      found,
    );
    expect(found.messages.map((message) => message.id)).toEqual(['That name is taken.', 'It\'s a "quote".', 'Try again in {count} second.', 'Incorrect code.']);
    expect(found.problems).toEqual([]);
  });

  it('reports a message the catalogs cannot hold: a template literal, or a value where a literal must be', () => {
    const found = empty();
    extractFromCode("throw new LatchkeyError('not_found', `No app ${id}.`);\nconst m = msg(text);\nconst ok = msg(text); // makemessages: passes a message on", 'c.ts', found);
    expect(found.problems).toEqual([
      "c.ts:2: msg(…) its message is not a string literal",
      "c.ts:1: a not_found error's message is a template literal with ${}: use {name} placeholders and params",
    ]);
  });
});

describe('the catalog files', () => {
  const messages = [
    { id: 'Sign in', file: 'src/a.ts' },
    { id: 'Hello {name}', file: 'templates/b.html' },
    { id: '{count} code', plural: '{count} codes', file: 'src/a.ts' },
  ];

  it('flag placeholders for the tools that check them, and name files without line numbers', () => {
    const template = catalogTemplate(messages, 'demo');
    expect(template).toContain('#: templates/b.html\n#, python-brace-format\nmsgid "Hello {name}"');
    expect(template).toContain('msgid "{count} code"\nmsgid_plural "{count} codes"\nmsgstr[0] ""\nmsgstr[1] ""');
  });

  it('merge as msgmerge: translations kept, new ids empty, gone ids dropped unless kept, and stable', () => {
    const before = mergeCatalog([{ id: 'Sign in', file: 'x' }, { id: 'Old', file: 'x' }, { id: 'Override', file: 'x' }], undefined, 'ar', 'demo')
      .replace('msgid "Sign in"\nmsgstr ""', 'msgid "Sign in"\nmsgstr "تسجيل الدخول"')
      .replace('msgid "Override"\nmsgstr ""', 'msgid "Override"\nmsgstr "تجاوز"');
    expect(before).toContain('"Plural-Forms: nplurals=6;');
    const after = mergeCatalog(messages, before, 'ar', 'demo', (id) => id === 'Override');
    expect(after).toContain('msgid "Sign in"\nmsgstr "تسجيل الدخول"');
    expect(after).toContain('msgid "Override"\nmsgstr "تجاوز"');
    expect(after).not.toContain('"Old"');
    expect(after).toContain('msgstr[5] ""');
    expect(mergeCatalog(messages, after, 'ar', 'demo', (id) => id === 'Override')).toBe(after);
  });
});
