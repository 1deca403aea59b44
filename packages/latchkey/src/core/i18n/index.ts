export { msg, msgid, nmsg, pmsg, isMessage, interpolate, placeholdersOf, englishText, type Message, type MessageParams } from './message.js';
export { loadCatalogs, LATCHKEY_LOCALE_DIR, type Catalogs, type Translator } from './catalogs.js';
export {
  SHIPPED_LANGUAGES,
  acceptedLanguages,
  catalogFolders,
  firstSupported,
  isLanguageCode,
  languageName,
  normaliseLanguageCode,
  supportedVariant,
  textDirection,
  type TextDirection,
} from './languages.js';
