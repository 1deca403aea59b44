/**
 * Whether `next` may be followed: only a same-site, path-absolute URL such as `/accounts/email/`
 * or `/shop?page=2`. Everything a browser could read as another origin is refused: `//evil.com`
 * and `/\evil.com` (protocol-relative), any scheme (`https:`, `javascript:`), backslashes,
 * control characters (browsers strip tabs and newlines, turning `/\t/evil.com` into `//evil.com`),
 * and percent-encoded slashes or backslashes that a later decode could turn into either.
 */
export function isSafeRedirect(next: unknown): next is string {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2048) return false;
  if (!next.startsWith('/') || next.startsWith('//')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return false;
  if (/%(2f|5c)/i.test(next)) return false;
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
