/**
 * How a failed request to a provider is told in the server's log: a timeout names the setting that
 * bounds it, anything else gives the reasons fetch hides in its causes (ECONNREFUSED, a TLS
 * failure). Shared by the OAuth 2.0 base and the OpenID Connect provider.
 */
import type { ProviderHttp } from './provider.js';

/** `error` as a line: the timeout, or the message and its causes. */
export function describeNetworkFailure(error: unknown, http: ProviderHttp, describe: (error: unknown) => string = describeCauses): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${http.timeoutSeconds} s (SOCIALACCOUNT_REQUESTS_TIMEOUT)`;
  }
  return describe(error);
}

/** An error's message followed by those of its first causes. */
export function describeCauses(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error; current instanceof Error && parts.length < 3; current = current.cause) parts.push(current.message);
  return parts.length > 0 ? parts.join(': ') : String(error);
}
