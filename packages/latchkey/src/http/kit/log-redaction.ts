/**
 * What request logging may write of a URL. A URL can carry a live credential: the key of a
 * password-reset link (valid for days until used), of an email-confirmation link, an OAuth
 * `code` and `state`, a SAML message. Logs are kept for months, copied to log services and read
 * by people who are not meant to hold keys, so the secret parts are replaced with `[redacted]`
 * before a line is written, leaving enough (the route, the parameter names) to follow a request.
 *
 * Paths: the segment after a keyed prefix (account_reset_password_from_key's `<key>`). Matching is
 * case-insensitive and tolerates repeated slashes, because a mistyped URL still carries a live
 * key even though it answers 404 (and Fastify logs the 404 with the URL).
 *
 * Query strings: every value is hidden except those of a few parameters known to carry nothing
 * secret (`next`, the admin's list filters). A list of what to hide would miss the next secret
 * parameter someone adds; a list of what to show can only miss something harmless.
 */
import { ACCOUNT_URLS } from '../../config/url-names.js';

export const REDACTED = '[redacted]';

/** A keyed page's path up to its `:key`. */
function beforeKey(name: 'account_reset_password_from_key' | 'account_confirm_email'): string {
  return ACCOUNT_URLS[name].slice(0, ACCOUNT_URLS[name].indexOf(':key'));
}

/** The pages whose URL ends with a mailed key: allauth's (docs/accounts.md). */
export const KEYED_PATH_PREFIXES: readonly string[] = [beforeKey('account_reset_password_from_key'), beforeKey('account_confirm_email')];

/**
 * Query parameters whose values are shown. `next` only when it is not itself a keyed path.
 * The rest are the admin's list controls (order, cursor, yes/no filters) and the name of a
 * provider's refusal (`error=access_denied`), which say nothing secret and help to read a log.
 */
const SHOWN_QUERY_PARAMETERS = new Set(['next', 'o', 'after', 'is_staff', 'is_superuser', 'is_active', 'provider', 'process', 'error']);

/** The origin of an absolute-form request target (`GET http://host/path HTTP/1.1`), kept as is. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

export type UrlRedactor = (url: string) => string;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * `/a/b/` -> /^(\/+a\/+b\/+)([^/?#]+)/i: the prefix, then the key. `mounted`: the prefix may come
 * after other segments too (Latchkey's own pages, under whatever URL_PREFIX the site mounts them,
 * or a link that still points where they used to be).
 */
function keyedPathPattern(prefix: string, mounted: boolean): RegExp {
  const literal = prefix
    .split('/')
    .map(escapeRegExp)
    .join('/+');
  return new RegExp(`^(${mounted ? '(?:/+[^/?#]+)*?' : ''}${literal})([^/?#]+)`, 'i');
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * Makes the redactor for a site's keyed paths: the library's own and any more the project names
 * (its front end's routes, from HEADLESS_FRONTEND_URLS, when it serves them itself).
 */
export function createUrlRedactor(extraKeyedPrefixes: readonly string[] = []): UrlRedactor {
  const patterns = [...KEYED_PATH_PREFIXES.map((prefix) => keyedPathPattern(prefix, true)), ...extraKeyedPrefixes.map((prefix) => keyedPathPattern(prefix, false))];
  const redactPath = (path: string): string => {
    // The router decodes `%2D` to `-` before matching, so `confirm%2Demail/<key>/` is
    // the same page; only escapes of letters, digits and -._~ are undone, which leaves the
    // segments as the router splits them.
    const plain = path.replace(/%([0-9a-f]{2})/gi, (escape: string, hex: string) => {
      const character = String.fromCharCode(parseInt(hex, 16));
      return /^[A-Za-z0-9._~-]$/.test(character) ? character : escape;
    });
    for (const pattern of patterns) {
      if (pattern.test(plain)) return plain.replace(pattern, `$1${REDACTED}`);
    }
    return path;
  };
  const isKeyedPath = (path: string): boolean => redactPath(path) !== path;

  const redactParameter = (parameter: string): string => {
    if (parameter === '') return parameter;
    const separator = parameter.indexOf('=');
    // A bare `?abc123` is a value without a name: it could be anything, so it is hidden.
    if (separator === -1) return SHOWN_QUERY_PARAMETERS.has(decoded(parameter).toLowerCase()) ? parameter : REDACTED;
    const name = parameter.slice(0, separator);
    const value = parameter.slice(separator + 1);
    const shown = SHOWN_QUERY_PARAMETERS.has(decoded(name).toLowerCase()) && !isKeyedPath(decoded(value).replace(ORIGIN, ''));
    return shown ? parameter : `${name}=${REDACTED}`;
  };

  return (url) => {
    const origin = ORIGIN.exec(url)?.[0] ?? '';
    const rest = url.slice(origin.length);
    const queryStart = rest.search(/[?#]/);
    const path = queryStart === -1 ? rest : rest.slice(0, queryStart);
    let tail = queryStart === -1 ? '' : rest.slice(queryStart);
    // A fragment is never sent by a browser; one in a request target was put there by hand, and
    // may hold anything (front ends carry keys there), so it is dropped whole.
    const fragmentStart = tail.indexOf('#');
    const fragment = fragmentStart === -1 ? '' : `#${REDACTED}`;
    if (fragmentStart !== -1) tail = tail.slice(0, fragmentStart);
    const query = tail === '' ? '' : `?${tail.slice(1).split(/([&;])/).map((part) => (part === '&' || part === ';' ? part : redactParameter(part))).join('')}`;
    return `${origin}${redactPath(path)}${query}${fragment}`;
  };
}

/** Anything in free text that looks like a URL or a path, e.g. in `Route GET:/<path> not found`. */
const URL_IN_TEXT = /(?:[a-z][a-z0-9+.-]*:\/\/[^\s/?#"'<>]*)?\/[^\s"'<>]*/gi;

/** Applies the redactor to every URL or path inside a message. */
export function redactUrlsInText(text: string, redactUrl: UrlRedactor): string {
  return text.replace(URL_IN_TEXT, (url) => redactUrl(url));
}

/**
 * The path prefixes of a front end's keyed routes (HEADLESS_FRONTEND_URLS values such as
 * `https://app.example.com/account/reset/{key}`): the literal path before `{key}`. A key in the
 * query string is hidden anyway; one in the fragment never reaches a server.
 */
export function keyedPrefixesOf(frontendUrls: Readonly<Record<string, string>>): string[] {
  const prefixes: string[] = [];
  for (const template of Object.values(frontendUrls)) {
    const beforeKey = template.replace(ORIGIN, '').split('{key}')[0];
    if (beforeKey === undefined || beforeKey === template.replace(ORIGIN, '') || /[?#]/.test(beforeKey)) continue;
    const prefix = beforeKey.startsWith('/') ? beforeKey : `/${beforeKey}`;
    // A key right after the origin (`https://app.example.com/{key}`) would make every first
    // segment of every path look like a key; such a front end lives on another host anyway.
    if (prefix !== '/') prefixes.push(prefix);
  }
  return prefixes;
}
