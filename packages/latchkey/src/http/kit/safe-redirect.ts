import type { AccountAdapter } from '../../account/adapter.js';
import { absoluteUrlOr, safeRedirectOr } from '../../core/safe-url.js';

// The strict rule itself lives in core/ (the adapter's isSafeUrl defaults to it); the doors keep
// importing it from here.
export { isSafeRedirect, safeRedirectOr } from '../../core/safe-url.js';

/** Who judges a target a request chose: the project's AccountAdapter (its isSafeUrl). */
export type RedirectJudge = Pick<AccountAdapter, 'isSafeUrl'>;

/**
 * Where to send the browser for a target a request chose (a `next`, a stored `next`, a SAML
 * RelayState), or `fallback`: every door asks here, so that the project's
 * AccountAdapter.isSafeUrl (allauth's is_safe_url) decides for all of them.
 *
 * Only two forms ever reach the adapter, each already in the form the redirect will send: a path
 * of this site that passes the strict rule (safeRedirectOr: percent-encoded, dot segments
 * resolved), or an absolute http(s) URL as the WHATWG parser serialises it (absoluteUrlOr: no
 * whitespace, control character, backslash or user:password; characters outside ASCII
 * percent-encoded). Anything else (`//host`, `javascript:`, a raw CR LF) falls back without
 * asking, so no override can let a header be injected or a scheme be run, and the adapter judges
 * exactly the string that is sent. The default isSafeUrl accepts the paths and nothing else:
 * exactly safeRedirectOr, as before the hook.
 */
export function redirectTargetOr<Fallback extends string | undefined>(judge: RedirectJudge, next: unknown, fallback: Fallback): string | Fallback {
  const target = safeRedirectOr(next, undefined) ?? absoluteUrlOr(next, undefined);
  return target !== undefined && judge.isSafeUrl(target) === true ? target : fallback;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * A front end's URL to send the browser to (the headless API's `callback_url`), or `fallback`: a
 * same-site path, by the same rule as `next` (safeRedirectOr), or an absolute http(s) URL at one
 * of `allowedOrigins` (the site's own, and the front ends allowed to call the API:
 * CORS_ALLOWED_ORIGINS). Anything else would make the sign-in an open redirect. No user:password
 * part, whitespace, control character or backslash, which browsers read in ways a parser here
 * might not. An absolute URL is sent as the WHATWG URL parser serialises it, characters outside
 * ASCII percent-encoded, for the reason safeRedirectOr gives.
 */
export function allowedFrontendUrlOr<Fallback extends string | undefined>(value: unknown, allowedOrigins: readonly string[], fallback: Fallback): string | Fallback {
  const sameSite = safeRedirectOr(value, undefined);
  if (sameSite !== undefined) return sameSite;
  const absolute = absoluteUrlOr(value, undefined);
  if (absolute === undefined) return fallback;
  return allowedOrigins.some((origin) => originOf(origin) === new URL(absolute).origin) ? absolute : fallback;
}

/** Whether the browser may be sent to a front end's URL (allowedFrontendUrlOr's target is what a redirect sends). */
export function isAllowedFrontendUrl(value: unknown, allowedOrigins: readonly string[]): value is string {
  return allowedFrontendUrlOr(value, allowedOrigins, undefined) !== undefined;
}

/**
 * The headless `callback_url` as every door takes it: a same-site path the adapter's isSafeUrl
 * accepts (by default, every path the strict rule allows), a URL at one of `allowedOrigins`
 * (CORS_ALLOWED_ORIGINS: the project's own list of front ends, taken as it is), or another
 * absolute URL the adapter's isSafeUrl allows; otherwise `fallback`. With the default adapter,
 * exactly allowedFrontendUrlOr.
 */
export function frontendTargetOr<Fallback extends string | undefined>(judge: RedirectJudge, value: unknown, allowedOrigins: readonly string[], fallback: Fallback): string | Fallback {
  const sameSite = safeRedirectOr(value, undefined);
  if (sameSite !== undefined) return judge.isSafeUrl(sameSite) === true ? sameSite : fallback;
  const allowed = allowedFrontendUrlOr(value, allowedOrigins, undefined);
  if (allowed !== undefined) return allowed;
  return redirectTargetOr(judge, value, fallback);
}
