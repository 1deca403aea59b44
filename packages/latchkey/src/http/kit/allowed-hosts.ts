import type { FastifyReply, FastifyRequest } from 'fastify';
import { envNameOf } from '../../config/settings.js';

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

/** How the guard refuses: whether to explain on the page (local mode), and the page to send. */
export interface AllowedHostsGuardOptions {
  /**
   * Local mode: the page names the refused host and the setting to change, as Django's DEBUG page
   * does. Elsewhere the page says only "Bad Request": the log line says the rest.
   */
  explain?: boolean;
  /** Sends the 400 page (the site's 400.html: kit/error-pages.ts); a bare page when absent. */
  sendPage?: (request: FastifyRequest, reply: FastifyReply, message: string | undefined) => FastifyReply;
}

/** A Host header is written into the log and onto a local page: never more of it than this. */
const MAX_SHOWN_HOST = 100;

function shown(host: string): string {
  return host.length > MAX_SHOWN_HOST ? `${host.slice(0, MAX_SHOWN_HOST)}…` : host;
}

/**
 * The refused host and what would let it in: the host part to add to ALLOWED_HOSTS, when the
 * header is a plain host[:port] (a malformed one cannot be added).
 */
interface Refusal {
  host: string;
  /** Where the host came from: the Host header, or X-Forwarded-Host through a trusted proxy. */
  header: 'Host' | 'X-Forwarded-Host';
  addable: string | undefined;
}

function refusalOf(request: FastifyRequest, allowed: readonly string[]): Refusal | undefined {
  const forwarded = request.host !== request.headers.host;
  if (!isAllowedHost(request.host, allowed)) return refusal(request.host, forwarded ? 'X-Forwarded-Host' : 'Host');
  if (forwarded && !isAllowedHost(request.headers.host, allowed)) return refusal(request.headers.host, 'Host');
  return undefined;
}

function refusal(host: string | undefined, header: Refusal['header']): Refusal {
  return { host: host ?? '', header, addable: host === undefined ? undefined : hostWithoutPort(host.toLowerCase()) };
}

const BARE_PAGE = '<!doctype html><title>400 Bad Request</title><h1>Bad Request (400)</h1>';

/**
 * Checks the host the app will act on: `request.host`, which behind a trusted proxy comes from
 * X-Forwarded-Host. Checking only the Host header would let a forwarded host slip through to the
 * CSRF origin check and anything else that trusts `request.host`.
 *
 * A refusal writes one warning naming the host and the setting to change, as Django's
 * DisallowedHost does, so that an operator who forgot a domain sees why in the log. The page names
 * them only in local mode: in production it says nothing of the host or of the list. The page is
 * built from nothing in the request (no link from the refused Host header).
 */
export function allowedHostsGuard(allowed: readonly string[], options: AllowedHostsGuardOptions = {}) {
  const variable = envNameOf('ALLOWED_HOSTS');
  return async function checkAllowedHost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.routeOptions.config.allowAnyHost === true) return;
    const refused = refusalOf(request, allowed);
    if (refused === undefined) return;
    const named = refused.host === '' ? `No ${refused.header} header` : `Invalid ${refused.header} header ${JSON.stringify(shown(refused.host))}`;
    const advice =
      refused.addable === undefined
        ? 'it is not a host name that ALLOWED_HOSTS can list'
        : `to serve this host, add ${JSON.stringify(shown(refused.addable))} to ALLOWED_HOSTS (${variable})`;
    request.log.warn({ host: shown(refused.host) }, `${named}: refused with 400; ${advice}.`);
    const message = options.explain === true ? `${named}. ${localAdvice(refused, allowed, variable)}` : undefined;
    reply.header('cache-control', 'no-store');
    if (options.sendPage) {
      await options.sendPage(request, reply, message);
      return;
    }
    await reply.code(400).type('text/html; charset=utf-8').send(BARE_PAGE);
  };
}

/** Local mode's page: the whole value to set, since the variable replaces the list rather than adding to it. */
function localAdvice(refused: Refusal, allowed: readonly string[], variable: string): string {
  if (refused.addable === undefined) return `It is not a host name that ALLOWED_HOSTS can list (now ${allowed.join(', ') || 'empty'}).`;
  return `You may need to add ${JSON.stringify(shown(refused.addable))} to ALLOWED_HOSTS: set ${variable}=${[...allowed, shown(refused.addable)].join(',')}`;
}
