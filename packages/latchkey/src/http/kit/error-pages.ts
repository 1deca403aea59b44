/**
 * The site's error pages, as Django's `400.html`, `403.html`, `404.html` and `500.html` (with
 * `429.html` and `503.html` beside them): templates at the top of the template folders, in the
 * site's layout, which a project overrides by putting a file of the same name in its own
 * `templates/`. A JSON client gets `{"detail": ...}` instead.
 *
 * An error page reads neither the database nor the session: it must render when the database is
 * what failed, a flood of unknown URLs must cost no queries, and the refused-host page is sent
 * before anything about the request is trusted. So every error page shows the layout as a
 * stranger sees it. Nothing on it is built from the request (its links are paths, never made from
 * the Host header), and should the template itself fail, a minimal page is sent instead: never a
 * stack trace.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config/settings.js';
import type { TemplateRenderer } from '../../templates/ports.js';
import type { Catalogs, Translator } from '../../core/i18n/catalogs.js';
import { inRequestLanguage, negotiatedLanguage } from './request-language.js';
import { escapeHtml } from './reference-page.js';
import { unexpectedErrorHandler, wantsJson } from './unexpected-errors.js';

/** What an error page is made from: the site's name and the templates. */
export interface ErrorPageDeps {
  settings: Pick<Settings, 'SITE_NAME' | 'HEADLESS_ONLY' | 'LANGUAGES' | 'LANGUAGE_CODE'>;
  templates: TemplateRenderer;
  catalogs: Catalogs;
}

/** What a page says besides its status: a safe message (never an error's own), and a reason (a CSRF refusal's). */
export interface ErrorPageContent {
  message?: string;
  reason?: string;
}

/** The statuses that have a template of their own; any other 4xx shows 400.html, any other 5xx 500.html. */
const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Server Error',
  503: 'Service Unavailable',
};

function titleOf(status: number): string {
  return TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Bad Request');
}

/** The template a status is rendered with: `404.html`, or the nearest of its class. */
export function errorPageTemplate(status: number): string {
  if (TITLES[status] !== undefined) return `${status}.html`;
  return status >= 500 ? '500.html' : '400.html';
}

/** What is sent when the template cannot be rendered (a project's broken layout): no layout, nothing to fail. */
function minimalPage(status: number, content: ErrorPageContent): string {
  const title = `${titleOf(status)} (${status})`;
  const lines = [content.message, content.reason].filter((line): line is string => line !== undefined && line !== '');
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
    `<body><h1>${title}</h1>${lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('')}<p><a href="/">Go to the home page</a></p></body></html>\n`
  );
}

/** The HTML of an error page: the template in the layout, or the minimal page when rendering fails. */
export function errorPageHtml(deps: ErrorPageDeps, translator: Translator, status: number, content: ErrorPageContent, onRenderFailure: (error: unknown) => void): string {
  try {
    return deps.templates.render(errorPageTemplate(status), {
      site_name: deps.settings.SITE_NAME,
      status,
      message: content.message,
      reason: content.reason,
      // The layout as a stranger sees it: no user, no flash messages, no sign-up link to ask about.
      user: undefined,
      messages: [],
      signup_open: false,
      // With HEADLESS_ONLY there are no account pages to link to: the front end is the way in.
      headless_only: deps.settings.HEADLESS_ONLY,
    }, translator);
  } catch (error) {
    onRenderFailure(error);
    return minimalPage(status, content);
  }
}

/**
 * Sends an error page with `status`, never cached or framed. The reply's other headers (a
 * Retry-After, say) are kept.
 */
export function sendErrorPage(deps: ErrorPageDeps, request: FastifyRequest, reply: FastifyReply, status: number, content: ErrorPageContent = {}): FastifyReply {
  // The language from the request alone (cookie, Accept-Language): an error page reads no session.
  const translator = deps.catalogs.translator(negotiatedLanguage(deps.settings, request));
  const html = errorPageHtml(deps, translator, status, content, (error) => request.log.error({ err: error }, `the error page ${errorPageTemplate(status)} could not be rendered; a minimal page was sent`));
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-language', translator.language)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'self'; frame-ancestors 'none'; base-uri 'none'")
    .type('text/html; charset=utf-8')
    .send(html);
}

/**
 * An error page for a browser, `{"detail": ...}` for a JSON client: the detail given, else the
 * page's message, else its title ("Bad Request (400)").
 */
export function sendErrorAnswer(
  deps: ErrorPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  content: ErrorPageContent = {},
  detail?: string,
): FastifyReply {
  if (!wantsJson(request)) return sendErrorPage(deps, request, reply, status, content);
  return reply.code(status).header('cache-control', 'no-store').send({ detail: inRequestLanguage(request, detail ?? content.message ?? `${titleOf(status)} (${status})`) });
}

/** DRF's words for a resource that is not there, and the JSON a JSON client gets for an unknown URL. */
export const NOT_FOUND = 'Not found.';

/** The handlers a project's app sets (`app.setNotFoundHandler(...)`, `app.setErrorHandler(...)`), and Latchkey's scope too. */
export interface ErrorPageHandlers {
  notFoundHandler: (request: FastifyRequest, reply: FastifyReply) => FastifyReply;
  errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply;
}

/**
 * An unknown URL answers the 404 page, a failure the page of its status (kit/unexpected-errors.ts
 * decides the status and what may be said: a 500 says nothing of its cause); a JSON client gets
 * `{"detail": ...}` for either. The headless API and /api/ keep their own handlers, in their own
 * shapes, inside their scopes.
 */
export function errorPageHandlers(deps: ErrorPageDeps): ErrorPageHandlers {
  return {
    notFoundHandler(request, reply) {
      // Fastify's own line for a URL nothing serves, which a custom handler would otherwise lose
      // (its URL is redacted like any other: kit/logger-options.ts).
      request.log.info(`Route ${request.method}:${request.url} not found`);
      return sendErrorAnswer(deps, request, reply, 404, {}, NOT_FOUND);
    },
    errorHandler: unexpectedErrorHandler(({ status, message }, request, reply) => {
      if (wantsJson(request)) return reply.send({ detail: inRequestLanguage(request, message) });
      // A 4xx's message describes the request (Fastify's "Body is not valid JSON"); a 5xx's page says it in its own words.
      return sendErrorPage(deps, request, reply, status, status < 500 ? { message } : {});
    }),
  };
}
