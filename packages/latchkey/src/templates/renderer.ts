import { fileURLToPath } from 'node:url';
import nunjucks from 'nunjucks';
import { isRouteName, type LatchkeyUrls, type UrlParams } from '../config/url-names.js';
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
  const loader = new nunjucks.FileSystemLoader([...(options.projectDirs ?? []), LIBRARY_TEMPLATES], { noCache: !options.cache });
  const environment = (autoescape: boolean) =>
    new nunjucks.Environment(loader, { autoescape, throwOnUndefined: false, trimBlocks: true, lstripBlocks: true })
      // Django's {% url 'account_login' %}: `{{ url('account_login') }}`, `{{ url('account_confirm_email', { key: key }) }}`.
      .addGlobal('url', templateUrl(options.urls))
      // Django's {% static %}, for Latchkey's own files: `{{ static('latchkey.css') }}`, under URL_PREFIX.
      .addGlobal('static', (file: unknown) => options.urls.static(String(file)));
  const html = environment(true);
  const text = environment(false);
  return {
    render(name, context) {
      return (name.endsWith('.html') ? html : text).render(name, context);
    },
  };
}
