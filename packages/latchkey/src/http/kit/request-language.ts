/**
 * Which language a request gets, as Django's LocaleMiddleware chooses it (docs/translations.md):
 * the signed-in person's own choice (stored on the account), else the language cookie a choice on
 * the switch set, else the first offered language of Accept-Language, else LANGUAGE_CODE. Only a
 * language in LANGUAGES is ever chosen, so a header or cookie cannot name a catalog we do not have.
 */
import type { FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import type { Settings } from '../../config/settings.js';
import type { Translator } from '../../core/i18n/catalogs.js';
import { acceptedLanguages, firstSupported } from '../../core/i18n/languages.js';
import { englishText, type Message } from '../../core/i18n/message.js';
import type { LatchkeyDeps } from '../../deps.js';

/** Django's LANGUAGE_COOKIE_NAME, so that a site moving from Django keeps its visitors' choices. */
export const LANGUAGE_COOKIE = 'django_language';

/** A year, as Django's LANGUAGE_COOKIE_AGE is unset (a session cookie) but a choice is meant to last. */
export const LANGUAGE_COOKIE_AGE = 365 * 24 * 60 * 60;

type LanguageSettings = Pick<Settings, 'LANGUAGES' | 'LANGUAGE_CODE'>;

const negotiated = new WeakMap<FastifyRequest, string>();

/** The language for an anonymous reader of this request (cookie, Accept-Language, LANGUAGE_CODE), worked out once per request. */
export function negotiatedLanguage(settings: LanguageSettings, request: FastifyRequest): string {
  const known = negotiated.get(request);
  if (known !== undefined) return known;
  const cookie = request.cookies?.[LANGUAGE_COOKIE];
  // LANGUAGE_CODE is always offered (config/load.ts), so the first is never reached but for types.
  const language = firstSupported([cookie, ...acceptedLanguages(request.headers['accept-language']), settings.LANGUAGE_CODE], settings.LANGUAGES) ?? settings.LANGUAGES[0] ?? 'en';
  negotiated.set(request, language);
  return language;
}

/** The language negotiated for this request if it was (for clientOf, which has no settings), else undefined. */
export function languageNegotiatedFor(request: FastifyRequest): string | undefined {
  return negotiated.get(request);
}

/** The reader's language: the signed-in person's stored choice when offered, else the request's. */
export function readerLanguage(settings: LanguageSettings, request: FastifyRequest, user?: Pick<User, 'language'>): string {
  return firstSupported([user?.language], settings.LANGUAGES) ?? negotiatedLanguage(settings, request);
}

const requestTranslators = new WeakMap<FastifyRequest, Translator>();

/**
 * Works out the request's language once, as Latchkey's scope receives it (plugin.ts), and keeps
 * its translator for the answers that are made far from the deps (DRF's messages, api/respond.ts).
 */
export function negotiateRequestLanguage(deps: Pick<LatchkeyDeps, 'settings' | 'catalogs'>, request: FastifyRequest): void {
  requestTranslators.set(request, deps.catalogs.translator(negotiatedLanguage(deps.settings, request)));
}

/** A message in the request's language (negotiateRequestLanguage), or in English outside Latchkey's scope. */
export function inRequestLanguage(request: FastifyRequest, message: Message | string): string {
  const translator = requestTranslators.get(request);
  if (translator !== undefined) return translator.translate(message);
  return typeof message === 'string' ? message : englishText(message);
}

export function readerTranslator(deps: Pick<LatchkeyDeps, 'settings' | 'catalogs'>, request: FastifyRequest, user?: Pick<User, 'language'>): Translator {
  return deps.catalogs.translator(readerLanguage(deps.settings, request, user));
}
