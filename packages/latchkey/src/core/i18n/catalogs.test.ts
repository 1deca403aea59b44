import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalogs } from './catalogs.js';
import { msg, nmsg, pmsg } from './message.js';

function localeDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'lk-locale-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const header = (pluralForms: string) => `msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Plural-Forms: ${pluralForms}\\n"\n\n`;

const ARABIC_PLURALS = 'nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5);';

describe('the catalogs', () => {
  const project = localeDir({
    'ar/LC_MESSAGES/messages.po':
      header(ARABIC_PLURALS) +
      'msgid "{count} code left"\nmsgid_plural "{count} codes left"\nmsgstr[0] "لا رموز"\nmsgstr[1] "رمز واحد"\nmsgstr[2] "رمزان"\nmsgstr[3] "{count} رموز"\nmsgstr[4] "{count} رمزًا"\nmsgstr[5] "{count} رمز"\n\n' +
      'msgid "Hello {name}"\nmsgstr "مرحبًا {name}"\n\n',
    'fr/LC_MESSAGES/messages.po':
      header('nplurals=2; plural=(n > 1);') +
      'msgid "Sign in"\nmsgstr "Se connecter (projet)"\n\n' +
      '#, fuzzy\nmsgid "Leave the shop"\nmsgstr "Quitter la boutique"\n\n' +
      'msgctxt "navigation"\nmsgid "Email"\nmsgstr "Adresses e-mail"\n\n' +
      'msgid "{count} code left"\nmsgid_plural "{count} codes left"\nmsgstr[0] "{count} code restant"\nmsgstr[1] "{count} codes restants"\n\n',
  });
  const catalogs = loadCatalogs({ languages: ['en', 'fr', 'ar', 'it'], localeDirs: [project] });

  it('fills placeholders and chooses each language\'s plural form', () => {
    const arabic = catalogs.translator('ar');
    expect(arabic.translate(msg('Hello {name}', { name: 'Layla' }))).toBe('مرحبًا Layla');
    expect([0, 1, 2, 5, 11, 100].map((count) => arabic.ngettext('{count} code left', '{count} codes left', count))).toEqual(['لا رموز', 'رمز واحد', 'رمزان', '5 رموز', '11 رمزًا', '100 رمز']);
    const french = catalogs.translator('fr');
    expect(french.translate(nmsg('{count} code left', '{count} codes left', 0))).toBe('0 code restant');
    expect(french.translate(nmsg('{count} code left', '{count} codes left', 2))).toBe('2 codes restants');
    expect(arabic.direction).toBe('rtl');
  });

  it("lets a project's catalog override Latchkey's and tells contexts apart", () => {
    const french = catalogs.translator('fr');
    expect(french.gettext('Sign in')).toBe('Se connecter (projet)');
    expect(french.translate(pmsg('navigation', 'Email'))).toBe('Adresses e-mail');
  });

  it('shows English for a message no catalog translates, or only a fuzzy guess does', () => {
    const french = catalogs.translator('fr');
    expect(french.gettext('Leave the shop')).toBe('Leave the shop');
    expect(french.gettext('Nobody translated {this}', { this: 'me' })).toBe('Nobody translated me');
    expect(catalogs.translator('it').ngettext('{count} code left', '{count} codes left', 3)).toBe('3 codes left');
  });

  it('formats dates and numbers as the language writes them, in UTC', () => {
    const at = new Date('2026-12-03T09:05:00Z');
    expect(catalogs.translator('fr').formatDate(at, 'date')).toBe('3 déc. 2026');
    expect(catalogs.translator('en').formatNumber(1234.5)).toBe('1,234.5');
    expect(catalogs.translator('fr').formatNumber(1234.5)).toBe('1\u202f234,5');
  });
});
