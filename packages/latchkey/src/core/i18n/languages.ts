/**
 * Language codes as Django writes them (`en-us`, `pt-br`, `ja`), the choice among the languages a
 * site offers, and what follows from a language: its writing direction and its own name.
 */

/** The languages Latchkey ships catalogs for (docs/translations.md), in the order the switch lists them. */
export const SHIPPED_LANGUAGES = ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'] as const;

/** Languages written right to left (Django's LANGUAGES_BIDI). */
const RIGHT_TO_LEFT = new Set(['ar', 'ckb', 'fa', 'he', 'ps', 'ug', 'ur', 'yi', 'dv', 'sd']);

/** A language code as Django writes it: lower case, parts joined by '-' (`pt_BR` and `pt-BR` read as `pt-br`). */
export function normaliseLanguageCode(code: string): string {
  return code.trim().toLowerCase().replace(/_/g, '-');
}

/** Whether `code` has a language code's shape (`fr`, `pt-br`, `zh-hans`), before it is looked up anywhere. */
export function isLanguageCode(code: string): boolean {
  return /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/.test(normaliseLanguageCode(code));
}

/**
 * The offered language that serves a request for `code`, as Django's get_supported_language_variant:
 * the code itself, else its general language (`de` for `de-at`), else a regional variant of it
 * (`pt-br` for `pt`); undefined when none is offered.
 */
export function supportedVariant(code: string, offered: readonly string[]): string | undefined {
  const wanted = normaliseLanguageCode(code);
  if (offered.includes(wanted)) return wanted;
  const general = wanted.split('-')[0] as string;
  if (offered.includes(general)) return general;
  return offered.find((candidate) => candidate.startsWith(`${general}-`));
}

/**
 * The languages an Accept-Language header asks for, most wanted first (RFC 9110 §12.5.4): q=0 means
 * "not this one", `*` says nothing useful, and a malformed entry is skipped rather than trusted.
 * At most 20 entries are read, so a long header costs little.
 */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  const entries: { code: string; quality: number; order: number }[] = [];
  for (const [order, part] of header.split(',').slice(0, 20).entries()) {
    const [tag = '', ...parameters] = part.trim().split(';');
    let quality = 1;
    for (const parameter of parameters) {
      const [name, value] = parameter.trim().split('=');
      if (name?.trim() === 'q') quality = Number(value);
    }
    if (!(quality > 0 && quality <= 1) || tag === '*' || !isLanguageCode(tag)) continue;
    entries.push({ code: normaliseLanguageCode(tag), quality, order });
  }
  return entries.sort((a, b) => b.quality - a.quality || a.order - b.order).map((entry) => entry.code);
}

/** The first of `wanted` (most preferred first) the site offers, as its offered variant. */
export function firstSupported(wanted: readonly (string | undefined)[], offered: readonly string[]): string | undefined {
  for (const code of wanted) {
    if (!code) continue;
    const variant = supportedVariant(code, offered);
    if (variant !== undefined) return variant;
  }
  return undefined;
}

export type TextDirection = 'ltr' | 'rtl';

export function textDirection(language: string): TextDirection {
  return RIGHT_TO_LEFT.has(normaliseLanguageCode(language).split('-')[0] as string) ? 'rtl' : 'ltr';
}

/** A language's name in itself ("Deutsch", "日本語", "العربية"), as the language switch shows it. */
export function languageName(language: string): string {
  try {
    const name = new Intl.DisplayNames([language], { type: 'language' }).of(language) ?? language;
    return name.charAt(0).toLocaleUpperCase(language) + name.slice(1);
  } catch {
    return language;
  }
}

/**
 * The catalog folders that may hold a language, most specific first, as gettext names them:
 * `pt-br` is looked up in `pt_BR`, then `pt`.
 */
export function catalogFolders(language: string): string[] {
  const [general = '', region] = normaliseLanguageCode(language).split('-');
  if (region === undefined) return [general];
  const regional = region.length === 2 ? region.toUpperCase() : region.charAt(0).toUpperCase() + region.slice(1);
  return [`${general}_${regional}`, general];
}
