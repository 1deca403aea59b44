/**
 * Whether `next` may be followed: only a same-site, path-absolute URL such as `/accounts/email/`
 * or `/shop?page=2`. Everything a browser could read as another origin is refused: `//evil.com`
 * and `/\evil.com` (protocol-relative), any scheme (`https:`, `javascript:`), backslashes,
 * control characters (browsers strip tabs and newlines, turning `/\t/evil.com` into `//evil.com`).
 *
 * In the path, percent-encoded slashes, backslashes and control characters are refused too, and
 * so is an encoded `%` (which hides them under a second encoding, `%252F`): a server or proxy
 * that decodes the path before redirecting could turn `/%2F%2Fevil.com` into `//evil.com`. The
 * query and fragment may hold any encoded character: they never decide the origin, and a `next`
 * inside a query (`/accounts/oidc/corp/login/?process=connect&next=%2Fdashboard%2F`, where the
 * reauthentication page returns to) is checked again, decoded, by the page that reads it.
 */
export function isSafeRedirect(next: unknown): next is string {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2048) return false;
  if (!next.startsWith('/') || next.startsWith('//')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return false;
  const path = next.split(/[?#]/, 1)[0]!;
  if (/%(2f|5c|25|[01][0-9a-f]|7f)/i.test(path)) return false;
  try {
    // A base URL of our own: the result must stay on it.
    const url = new URL(next, 'http://same-site.invalid');
    return url.origin === 'http://same-site.invalid';
  } catch {
    return false;
  }
}

export function safeRedirectOr(next: unknown, fallback: string): string {
  return isSafeRedirect(next) ? next : fallback;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * Whether the browser may be sent to a front end's URL (the headless API's `callback_url`): a
 * same-site path, as `next`, or an absolute http(s) URL at one of `allowedOrigins` (the site's own,
 * and the front ends allowed to call the API: CORS_ALLOWED_ORIGINS). Anything else would make the
 * sign-in an open redirect. No user:password part, whitespace, control character or backslash,
 * which browsers read in ways a parser here might not.
 */
export function isAllowedFrontendUrl(value: unknown, allowedOrigins: readonly string[]): value is string {
  if (isSafeRedirect(value)) return true;
  if (typeof value !== 'string' || value.length > 2048) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\\\s\u0000-\u001f\u007f]/.test(value) || !/^https?:\/\//i.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  return allowedOrigins.some((origin) => originOf(origin) === url.origin);
}
