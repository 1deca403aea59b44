import { fileURLToPath } from 'node:url';
import nunjucks from 'nunjucks';
import { isRouteName, type LatchkeyUrls, type UrlParams } from '../config/url-names.js';
import type { Translator } from '../core/i18n/catalogs.js';
import { isMessage, type MessageParams } from '../core/i18n/message.js';
import type { TemplateRenderer } from './ports.js';

/** The library's own templates: this folder. */
export const LIBRARY_TEMPLATES = fileURLToPath(new URL('.', import.meta.url));


/**
 * The `url` of every template: a page's link by its name (an account page's, or the admin's
 * `admin:...`), refusing a name no page has (a typo must not become a dead link).
 */
function templateUrl(urls: LatchkeyUrls) {
  return (name: unknown, params?: UrlParams): string => {
    if (!isRouteName(name)) throw new Error(`url(): no page is named ${String(name)}.`);
    return urls.urlFor(name, params ?? {});
  };
}

/**
 * Renders pages and emails with Nunjucks (Django-like syntax: extends, blocks, includes). A
 * project overrides any template by placing a file at the same relative path in one of its own
 * template folders, which are searched first, as Django's template loaders do. HTML templates
 * escape every value unless the template says otherwise; plain-text templates (an email's subject
 * and text body) do not, since there is no markup to protect and "O'Brien" must stay "O'Brien".
 */
export function createTemplateRenderer(options: { projectDirs?: readonly string[]; cache: boolean; urls: LatchkeyUrls }): TemplateRenderer {
  const files = new nunjucks.FileSystemLoader([...(options.projectDirs ?? []), LIBRARY_TEMPLATES], { noCache: !options.cache });
  const environment = (autoescape: boolean, translator: Translator) =>
    // A loader of its own: Nunjucks keeps compiled templates on the loader, and a template compiled
    // for one language (or with HTML escaping) must never be rendered for another.
    new nunjucks.Environment(translatingLoader(files, translator, autoescape), { autoescape, throwOnUndefined: false, trimBlocks: true, lstripBlocks: true })
      // Django's {% url 'account_login' %}: `{{ url('account_login') }}`, `{{ url('account_confirm_email', { key: key }) }}`.
      .addGlobal('url', templateUrl(options.urls))
      // Django's {% static %}, for Latchkey's own files: `{{ static('latchkey.css') }}`, under URL_PREFIX.
      .addGlobal('static', (file: unknown) => options.urls.static(String(file)))
      // Django's {% translate %} and {% blocktranslate %} (docs/translations.md). They are globals,
      // not context values, so that macros imported without context translate too.
      .addGlobal('_', (text: unknown, params?: MessageParams) => translateValue(translator, text, params))
      .addGlobal('ngettext', (singular: string, plural: string, count: number, params?: MessageParams) => translator.ngettext(singular, plural, count, params))
      .addGlobal('pgettext', (context: string, text: string, params?: MessageParams) => translator.pgettext(context, text, params))
      .addGlobal('language', translator.language)
      .addGlobal('language_dir', translator.direction)
      // Dates and numbers as the reader's language writes them: `{{ user.dateJoined | date }}`, `{{ n | number }}`.
      .addFilter('date', (value: unknown, style?: 'date' | 'datetime') => (value instanceof Date ? translator.formatDate(value, style) : value))
      .addFilter('number', (value: unknown) => (typeof value === 'number' ? translator.formatNumber(value) : value));
  // One pair of environments (HTML escaped, plain text not) per language, made when first needed:
  // each binds its translator once, so a render looks nothing up per string but the message itself.
  const environments = new Map<string, { html: nunjucks.Environment; text: nunjucks.Environment }>();
  const environmentsFor = (translator: Translator) => {
    let pair = environments.get(translator.language);
    if (pair === undefined) {
      pair = { html: environment(true, translator), text: environment(false, translator) };
      environments.set(translator.language, pair);
    }
    return pair;
  };
  return {
    render(name, context, translator) {
      const pair = environmentsFor(translator);
      return (name.endsWith('.html') ? pair.html : pair.text).render(name, context);
    },
  };
}

/** `{{ _("Sign in") }}` or `{{ pgettext("navigation", "Email") }}`: a fixed message, with nothing to fill in. */
const FIXED_MESSAGE = /\{\{\s*(?:_\(\s*(?:"([^"\\]*)"|'([^'\\]*)')|pgettext\(\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*,\s*(?:"([^"\\]*)"|'([^'\\]*)'))\s*\)\s*\}\}/g;

/** The same call anywhere in an expression (a macro's argument: `field(form, "login", _("Username"))`). */
const FIXED_MESSAGE_CALL = /(?<![\w.])(?:_\(\s*(?:"([^"\\]*)"|'([^'\\]*)')|pgettext\(\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*,\s*(?:"([^"\\]*)"|'([^'\\]*)'))\s*\)/g;

/** Template syntax a translation must not bring into a template's source. */
const TEMPLATE_SYNTAX = /\{[{%#]|[}%#]\}/;

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Reads templates for one language and writes its fixed messages into them before they are
 * compiled: `{{ _("Sign in") }}` becomes "Se connecter" in the French templates' source, escaped as
 * `{{ }}` would escape it, so a page costs no more to render than before it was translated (the
 * compiled templates are cached, per language, in production). A message with values to fill in,
 * or a value the code passes, is translated when rendered; so is a translation that would bring
 * template syntax into the source.
 */
function translatingLoader(files: nunjucks.FileSystemLoader, translator: Translator, html: boolean): nunjucks.ILoader {
  const translated = (ids: (string | undefined)[]): string => {
    const [id, quotedId, context, quotedContext, contextId, quotedContextId] = ids;
    return context !== undefined || quotedContext !== undefined
      ? translator.pgettext((context ?? quotedContext)!, (contextId ?? quotedContextId)!)
      : translator.gettext((id ?? quotedId)!);
  };
  // `{{ _("Sign in") }}` becomes the text itself, escaped as `{{ }}` would escape it.
  const asText = (whole: string, ...ids: (string | undefined)[]): string => {
    const text = translated(ids);
    if (TEMPLATE_SYNTAX.test(text)) return whole;
    return html ? text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!) : text;
  };
  // `_("Username")` inside an expression becomes the string "Nom d'utilisateur", escaped when printed as the call's result was.
  const asString = (whole: string, ...ids: (string | undefined)[]): string => {
    const text = translated(ids);
    return TEMPLATE_SYNTAX.test(text) ? whole : JSON.stringify(text);
  };
  return {
    getSource(name: string) {
      const source = files.getSource(name);
      return source === null ? null : { ...source, src: source.src.replace(FIXED_MESSAGE, asText).replace(FIXED_MESSAGE_CALL, asString) };
    },
  } as unknown as nunjucks.ILoader;
}

/**
 * `_()` in a template: a literal message id (`_("Sign in")`), or a value the code marked with
 * msg() (a page's title, a form's error, a flash message). Anything else is shown as it is, so a
 * person's own data passed through `_()` by mistake is never looked up as a message.
 */
function translateValue(translator: Translator, text: unknown, params?: MessageParams): string {
  if (isMessage(text)) return translator.translate(params === undefined ? text : { ...text, params: { ...text.params, ...params } });
  if (typeof text === 'string') return translator.gettext(text, params);
  // A number passes as itself; anything else that is not a message shows nothing rather than "[object Object]".
  return typeof text === 'number' || typeof text === 'boolean' ? String(text) : '';
}
