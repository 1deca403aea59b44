import { describe, expect, it } from 'vitest';
import { acceptedLanguages, catalogFolders, firstSupported, languageName, supportedVariant, textDirection } from './languages.js';

const OFFERED = ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'];

describe('choosing among the offered languages, as Django does', () => {
  it('takes the code, else its general language, else a regional variant of it', () => {
    expect(supportedVariant('fr', OFFERED)).toBe('fr');
    expect(supportedVariant('de-AT', OFFERED)).toBe('de');
    expect(supportedVariant('pt', OFFERED)).toBe('pt-br');
    expect(supportedVariant('pt_BR', OFFERED)).toBe('pt-br');
    expect(supportedVariant('en-us', OFFERED)).toBe('en');
    expect(supportedVariant('it', OFFERED)).toBeUndefined();
  });

  it('reads Accept-Language by quality, skipping q=0, * and malformed entries', () => {
    expect(acceptedLanguages('de-CH;q=0.5, ja, fr;q=0.8')).toEqual(['ja', 'fr', 'de-ch']);
    expect(acceptedLanguages('fr;q=0, *;q=0.5, <script>, es')).toEqual(['es']);
    expect(acceptedLanguages(undefined)).toEqual([]);
    expect(firstSupported(acceptedLanguages('it, pt-PT;q=0.9, en;q=0.1'), OFFERED)).toBe('pt-br');
  });

  it('knows which languages read right to left and names each in itself', () => {
    expect(textDirection('ar')).toBe('rtl');
    expect(textDirection('ja')).toBe('ltr');
    expect(languageName('de')).toBe('Deutsch');
    expect(languageName('ja')).toBe('日本語');
    expect(catalogFolders('pt-br')).toEqual(['pt_BR', 'pt']);
    expect(catalogFolders('zh-hans')).toEqual(['zh_Hans', 'zh']);
  });
});
