/**
 * Where a provider may send a person's browser, or Latchkey its client secret, codes and tokens:
 * an https URL, or plain http on this machine only (a test provider, a Keycloak on a developer's
 * laptop). Plain http to any other host would let anyone on the way read or change what travels.
 * One rule for every provider and every door that takes a provider's URL. In production a provider
 * may moreover not be on a loopback or private address at all (private-hosts.ts), so plain http
 * is left only to a loopback host SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists.
 */

/** How messages say what is allowed, in one wording. */
export const SECURE_URL_RULE = 'plain http is allowed on 127.0.0.1, [::1] and localhost only';

/** The URL when `value` is an https URL, or a plain http one on loopback; else undefined. */
export function secureUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === 'https:' || isLoopbackHttp(url) ? url : undefined;
}

export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}
