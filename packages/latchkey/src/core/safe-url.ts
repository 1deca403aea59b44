/**
 * The rules for a redirect to a target a request chose (a `next`, a SAML RelayState, a headless
 * `callback_url`). They live here, under every layer, because two layers apply them: the front
 * doors (http/kit/safe-redirect.ts) and the account adapter's isSafeUrl, whose default is
 * isSafeRedirect below.
 */

/** The longest target followed, before and after encoding: no browser needs more, and a Location header must stay small. */
const MAX_TARGET_CHARS = 2048;

/** A base URL of our own: a target resolved against it must stay on it. */
const SAME_SITE_BASE = 'http://same-site.invalid';

/**
 * Whether `target` has the form of a same-site, path-absolute URL such as `/orders/` or
 * `/shop?page=2`. Everything a browser could read as another origin is refused: `//evil.com` and
 * `/\evil.com` (protocol-relative), any scheme (`https:`, `javascript:`), backslashes, control
 * characters (browsers strip tabs and newlines, turning `/\t/evil.com` into `//evil.com`).
 *
 * In the path, percent-encoded slashes, backslashes and control characters are refused too, and
 * so is an encoded `%` (which hides them under a second encoding, `%252F`): a server or proxy
 * that decodes the path before redirecting could turn `/%2F%2Fevil.com` into `//evil.com`. The
 * query and fragment may hold any encoded character: they never decide the origin, and a `next`
 * inside a query (a provider's connect button, `…/login/?process=connect&next=%2Fdashboard%2F`,
 * where the reauthentication page returns to) is checked again, decoded, by the page that reads it.
 */
function hasSameSitePathForm(target: string): boolean {
  if (target.length === 0 || target.length > MAX_TARGET_CHARS) return false;
  if (!target.startsWith('/') || target.startsWith('//')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(target)) return false;
  const path = target.split(/[?#]/, 1)[0]!;
  return !/%(2f|5c|25|[01][0-9a-f]|7f)/i.test(path);
}

/**
 * The one rule for every redirect to a value a request chose (a `next`, a stored `next`, a SAML
 * RelayState, a headless `callback_url` on this site): the target to send the browser to, or
 * `fallback` when `next` may not be followed.
 *
 * A target that may be followed is sent as a browser would request it: serialised by the WHATWG
 * URL parser, so characters outside ASCII are percent-encoded as UTF-8 (`/。x` becomes
 * `/%E3%80%82x`, `/café` becomes `/caf%C3%A9`). A Location header can only carry Latin-1 (Node
 * refuses anything beyond it with ERR_INVALID_CHAR, a 500 after the login was settled), and
 * browsers read its bytes as UTF-8, so a raw `é` would arrive garbled. Encoding an encoded target
 * changes nothing, so a target may go through here again on its way out.
 *
 * Serialising also resolves dot segments, which can make a harmless path dangerous: `/.//evil.com`
 * becomes `//evil.com`, another host. So the encoded target is checked again, and falls back too.
 */
export function safeRedirectOr<Fallback extends string | undefined>(next: unknown, fallback: Fallback): string | Fallback {
  if (typeof next !== 'string' || !hasSameSitePathForm(next)) return fallback;
  let url: URL;
  try {
    url = new URL(next, SAME_SITE_BASE);
  } catch {
    return fallback;
  }
  if (url.origin !== SAME_SITE_BASE) return fallback;
  const target = `${url.pathname}${url.search}${url.hash}`;
  return hasSameSitePathForm(target) ? target : fallback;
}

/** Whether `next` may be followed (safeRedirectOr's target, never `next` itself, is what a redirect sends). */
export function isSafeRedirect(next: unknown): next is string {
  return safeRedirectOr(next, undefined) !== undefined;
}

/**
 * An absolute http(s) URL in the form a Location header can carry, or `fallback`: what an
 * absolute target is sent as once something has allowed its origin (a front end in
 * CORS_ALLOWED_ORIGINS, or the account adapter's isSafeUrl). It decides nothing about the origin.
 *
 * Refused: anything but `http://` or `https://` (`javascript:`, `//host`, `https:host`); a
 * user:password part; whitespace, control characters and backslashes, which browsers read in ways
 * a parser here might not, and which the WHATWG parser would silently drop (so the URL judged
 * would not be the one sent). What remains is sent as the parser serialises it: the host in
 * lower-case ASCII (punycode), characters outside ASCII percent-encoded as UTF-8, so no CR or LF
 * can reach the header and no raw byte can be misread.
 */
export function absoluteUrlOr<Fallback extends string | undefined>(value: unknown, fallback: Fallback): string | Fallback {
  if (typeof value !== 'string' || value.length > MAX_TARGET_CHARS) return fallback;
  // eslint-disable-next-line no-control-regex
  if (/[\\\s\u0000-\u001f\u007f]/.test(value) || !/^https?:\/\//i.test(value)) return fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fallback;
  }
  if (url.username !== '' || url.password !== '' || url.hostname === '') return fallback;
  return url.href.length > MAX_TARGET_CHARS ? fallback : url.href;
}
