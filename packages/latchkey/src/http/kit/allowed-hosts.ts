import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * True on a route whose answer is the same whatever the Host header and built from nothing in
     * it (the health check, which load balancers call by IP address): the guard lets it through.
     */
    allowAnyHost?: boolean;
  }
}

/**
 * Django's ALLOWED_HOSTS: a request whose Host header names another site is refused with 400
 * before anything reads it. This stops Host-header poisoning of anything built from the host,
 * and of caches keyed on it. (Links in emails never use the Host header anyway: they are built
 * from SITE_URL.) Patterns: an exact name, `.example.com` for the domain and its subdomains, or
 * `*` for any host.
 */
export function isAllowedHost(hostHeader: string | undefined, allowed: readonly string[]): boolean {
  if (!hostHeader) return false;
  const host = hostWithoutPort(hostHeader.toLowerCase());
  if (host === undefined) return false;
  return allowed.some((pattern) => {
    const p = pattern.toLowerCase();
    if (p === '*') return true;
    if (p.startsWith('.')) return host === p.slice(1) || host.endsWith(p);
    return host === p;
  });
}

/** The host part of a Host header, or undefined when the header is not a plain host[:port]. */
function hostWithoutPort(value: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.exec(value);
  if (!match) return undefined;
  return match[1]!.replace(/\.$/, '');
}

/**
 * Checks the host the app will act on: `request.host`, which behind a trusted proxy comes from
 * X-Forwarded-Host. Checking only the Host header would let a forwarded host slip through to the
 * CSRF origin check and anything else that trusts `request.host`.
 */
export function allowedHostsGuard(allowed: readonly string[]) {
  return async function checkAllowedHost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.routeOptions.config.allowAnyHost === true) return;
    const forwarded = request.host !== request.headers.host;
    if (!isAllowedHost(request.host, allowed) || (forwarded && !isAllowedHost(request.headers.host, allowed))) {
      await reply.code(400).type('text/html; charset=utf-8').send('<!doctype html><title>400 Bad Request</title><h1>Bad Request (400)</h1>');
    }
  };
}
