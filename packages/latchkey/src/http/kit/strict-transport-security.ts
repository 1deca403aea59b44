import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Settings } from '../../config/settings.js';

type HstsSettings = Pick<Settings, 'SECURE_HSTS_SECONDS' | 'SECURE_HSTS_INCLUDE_SUBDOMAINS' | 'SECURE_HSTS_PRELOAD'>;

/** A Fastify onRequest hook, as the app adds it to every route. */
export type OnRequestHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/** The header's value (RFC 6797 section 6.1), or undefined when SECURE_HSTS_SECONDS is 0. */
export function strictTransportSecurityValue(settings: HstsSettings): string | undefined {
  if (settings.SECURE_HSTS_SECONDS <= 0) return undefined;
  let value = `max-age=${settings.SECURE_HSTS_SECONDS}`;
  if (settings.SECURE_HSTS_INCLUDE_SUBDOMAINS) value += '; includeSubDomains';
  if (settings.SECURE_HSTS_PRELOAD) value += '; preload';
  return value;
}

/**
 * Django's SecurityMiddleware for HSTS: an onRequest hook for the whole app that adds
 * Strict-Transport-Security to every answer of a request that came over HTTPS. Only then:
 * browsers ignore the header over plain HTTP (RFC 6797 section 8.1), and a local site on
 * http://localhost must not be told to insist on HTTPS. Behind a proxy, "came over HTTPS" is the
 * X-Forwarded-Proto of a trusted hop (TRUST_PROXY_HOPS, through Fastify's trustProxy), never
 * the client's own claim.
 *
 * Set in onRequest rather than onSend so that every answer has it, the 404s and error pages too,
 * and a route that sets its own keeps its own.
 */
export function strictTransportSecurity(settings: HstsSettings): OnRequestHook {
  const value = strictTransportSecurityValue(settings);
  return function addStrictTransportSecurity(request, reply, done) {
    if (value !== undefined && request.protocol === 'https') reply.header('strict-transport-security', value);
    done();
  };
}
