import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Settings } from '../../config/settings.js';
import { csrfTokenMatches, isCsrfSecret, maskCsrfSecret, newCsrfSecret } from '../../sessions/csrf-token.js';
import { msgid } from '../../core/i18n/message.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set to false on routes that never authenticate by cookie (the app client, token API). */
    csrf?: boolean;
    /** How the route answers a refused request, when not with Django's 403 page (the headless API's envelope). */
    csrfRefusal?: (reply: FastifyReply, reason: string) => FastifyReply;
  }
}

/** Names as Django's, which clients rely on (docs/security.md, "CSRF protection"). */
export const CSRF_COOKIE = 'csrftoken';
/** The hidden form field a page's form carries the CSRF token in, as Django's. */
export const CSRF_FORM_FIELD = 'csrfmiddlewaretoken';
export const CSRF_HEADER = 'x-csrftoken';
const CSRF_COOKIE_AGE = 365 * 86400;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export interface CsrfOptions {
  cookieSecure: boolean;
  /** The site's own origin (from SITE_URL) is always trusted; these are extra ones. */
  siteUrl: string;
  trustedOrigins: readonly string[];
}

/**
 * An origin allowed to call the API with credentials (CORS_ALLOWED_ORIGINS) is a front end of
 * this site's own, so its requests pass the Origin check too; its requests still need the token.
 */
const optionsBySettings = new WeakMap<Settings, CsrfOptions>();

/** The CSRF options of a project's settings, made once (every session-authenticated API write asks). */
export function csrfOptionsFrom(settings: Settings): CsrfOptions {
  let options = optionsBySettings.get(settings);
  if (!options) {
    options = { cookieSecure: settings.CSRF_COOKIE_SECURE, siteUrl: settings.SITE_URL, trustedOrigins: [...settings.CSRF_TRUSTED_ORIGINS, ...settings.CORS_ALLOWED_ORIGINS] };
    optionsBySettings.set(settings, options);
  }
  return options;
}

/** The secret this request will answer with, when it had to make one (no valid cookie came). */
const issuedSecrets = new WeakMap<FastifyRequest, string>();

function cookieSecret(request: FastifyRequest): string | undefined {
  const issued = issuedSecrets.get(request);
  if (issued) return issued;
  const value = request.cookies[CSRF_COOKIE];
  return isCsrfSecret(value) ? value : undefined;
}

function setSecretCookie(reply: FastifyReply, secret: string, options: CsrfOptions): void {
  // Readable by JavaScript on purpose (docs/security.md): single-page clients copy it into X-CSRFToken.
  // The secret alone is useless to another site, which can neither read nor set our cookies.
  reply.setCookie(CSRF_COOKIE, secret, { path: '/', sameSite: 'lax', secure: options.cookieSecure, httpOnly: false, maxAge: CSRF_COOKIE_AGE });
}

/** A masked token for a form or a page, creating the cookie's secret when the request had none. */
export function csrfToken(request: FastifyRequest, reply: FastifyReply, options: CsrfOptions): string {
  let secret = cookieSecret(request);
  if (!secret) {
    secret = newCsrfSecret();
    issuedSecrets.set(request, secret);
    setSecretCookie(reply, secret, options);
  }
  return maskCsrfSecret(secret);
}

/** A new secret at login, so that a token seen before the login cannot be used after it. */
export function rotateCsrfSecret(request: FastifyRequest, reply: FastifyReply, options: CsrfOptions): void {
  const secret = newCsrfSecret();
  issuedSecrets.set(request, secret);
  setSecretCookie(reply, secret, options);
}

function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why an unsafe request must be refused, or undefined when it may pass. Layered as Django's
 * CsrfViewMiddleware: a browser that says the request is cross-site is believed; an Origin header
 * must be ours; over HTTPS without Origin the Referer must be ours; then the token must match.
 * The reason is a message id (msgid): English in logs and JSON answers, translated by the 403 page.
 */
export function csrfFailure(request: FastifyRequest, options: CsrfOptions): string | undefined {
  if (request.headers['sec-fetch-site'] === 'cross-site') return msgid('Cross-site request refused.');
  const good = new Set<string>([`${request.protocol}://${request.host}`]);
  // An origin that does not parse is dropped, never added as `undefined`: that would match a
  // request whose own Origin does not parse either (`null`, garbage) and switch the check off.
  for (const origin of [options.siteUrl, ...options.trustedOrigins].map(originOf)) if (origin !== undefined) good.add(origin);
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (!good.has(originOf(origin) ?? '')) return msgid('Origin checking failed: the request came from another site.');
  } else if (request.protocol === 'https') {
    const referer = request.headers.referer;
    if (referer === undefined) return msgid('Referer checking failed: no Referer.');
    if (!good.has(originOf(referer) ?? '')) return msgid('Referer checking failed: the request came from another site.');
  }
  const secret = cookieSecret(request);
  if (!secret) return msgid('CSRF cookie not set.');
  const body = request.body as Record<string, unknown> | undefined;
  const submitted = request.headers[CSRF_HEADER] ?? (body && typeof body === 'object' ? body[CSRF_FORM_FIELD] : undefined);
  if (submitted === undefined) return msgid('CSRF token missing.');
  if (!csrfTokenMatches(secret, submitted)) return msgid('CSRF token incorrect.');
  return undefined;
}

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').includes('json') || (request.headers.accept ?? '').includes('application/json');
}

/** The CSRF check's options: the origins it trusts, and the page a refused browser is shown. */
export interface CsrfProtectionOptions extends CsrfOptions {
  /** Sends the 403 page (the site's 403.html: kit/error-pages.ts) to a browser; a bare page when absent. */
  forbiddenPage?: (request: FastifyRequest, reply: FastifyReply, reason: string) => FastifyReply;
}

/**
 * Refuses every state-changing request without a valid token with 403 and changes nothing: the
 * check runs after the body is parsed and before any handler. Registered inside Latchkey's own
 * scope, so it protects Latchkey's routes and leaves the project's routes alone.
 */
export const csrfProtection = fp<CsrfProtectionOptions>(
  (app, options, done) => {
    app.addHook('preHandler', async (request, reply) => {
      // An unknown route changes nothing and answers 404 whatever the token.
      if (SAFE_METHODS.has(request.method) || request.routeOptions.config.csrf === false || request.is404) return;
      const failure = csrfFailure(request, options);
      if (failure === undefined) return;
      request.log.warn({ reason: failure }, 'CSRF check failed');
      reply.code(403).header('cache-control', 'no-store');
      const refusal = request.routeOptions.config.csrfRefusal;
      if (refusal) return refusal(reply, failure);
      if (wantsJson(request)) return reply.send({ detail: `CSRF Failed: ${failure}` });
      if (options.forbiddenPage) return options.forbiddenPage(request, reply, failure);
      return reply.type('text/html; charset=utf-8').send(
        `<!doctype html><title>403 Forbidden</title><h1>Forbidden (403)</h1><p>CSRF verification failed. Request aborted.</p><p>${failure}</p>`,
      );
    });
    done();
  },
  { name: 'latchkey-csrf', fastify: '5.x' },
);
