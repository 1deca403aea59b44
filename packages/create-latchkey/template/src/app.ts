import { fileURLToPath } from 'node:url';
%% if use_drf %%
import fastifyStatic from '@fastify/static';
%% endif %%
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { loggerOptions, type Latchkey } from '@latchkey/core';
%% if use_drf %%
import { registerUserApi } from './users/api.js';
%% endif %%
import { registerUserPages } from './users/pages.js';

/** The project's own templates: searched before Latchkey's, so a file here overrides one there. */
export const TEMPLATE_DIRS = [fileURLToPath(new URL('../templates', import.meta.url))];
/**
 * The project's translation catalogs (locale/<language>/LC_MESSAGES/messages.po, which
 * `npm run makemessages` writes): read before Latchkey's, so a message here overrides one there.
 */
export const LOCALE_DIRS = [fileURLToPath(new URL('../locale', import.meta.url))];
%% if use_drf %%

/** The single-page app (spa/): static files that call the headless API's browser client. */
const SPA_DIRECTORY = fileURLToPath(new URL('../spa/', import.meta.url));

/**
 * The app's files allow scripts, styles and requests from this origin only (nothing inline, no
 * CDN) and refuse to be framed, so that an injected string can neither run nor be clicked on
 * through another site's frame. The confirmation key travels in the URL's fragment, which the
 * browser never sends to a server, in a Referer or otherwise.
 *
 * The policy sets no form-action, on purpose: it does not fall back to default-src, so the app's
 * provider button (a form posted to the headless API, answered with a redirect to the provider:
 * spa/provider-views.js) may lead off this origin. Chromium applies form-action to every redirect
 * of the form's navigation, so a list would have to name each provider's authorization origin
 * (known only from its discovery document; apps may also be added in the database) and every host
 * its sign-in passes through on the way back. Where the form leads is decided by the server (a
 * configured provider, an allowed callback_url), and the app builds no form from data it is given.
 */
function setSpaHeaders(reply: { setHeader(name: string, value: string): unknown }): void {
  reply.setHeader('content-security-policy', "default-src 'self'; frame-ancestors 'none'");
  reply.setHeader('x-content-type-options', 'nosniff');
  reply.setHeader('referrer-policy', 'same-origin');
  // Revalidated on each visit, so that a new release is picked up at once.
  reply.setHeader('cache-control', 'no-cache');
}
%% endif %%

export interface AppOptions {
  /**
   * Request logging: true writes JSON lines to stdout (the server does); Fastify's logger options
   * (`{ level, stream }`) send them elsewhere, so that a test can read what the site would log.
   * Off by default.
   */
  logger?: FastifyServerOptions['logger'];
  /** A logger made already (the server's, which Latchkey writes to as well); instead of `logger`. */
  loggerInstance?: FastifyBaseLogger;
}

/**
 * The project's web app: Latchkey mounted as one plugin, and the project's own pages registered
 * inside it (so they share its layout, sessions and CSRF protection). Returned before `ready()`
 * so that a caller can add routes (tests do).
 */
export async function buildApp(latchkey: Latchkey, options: AppOptions = {}): Promise<FastifyInstance> {
  const { settings } = latchkey;
  const app = Fastify({
    // Latchkey's logger options, so that no header, and no key, code or token in a URL, is ever
    // written; a caller's level or stream goes on top.
    ...(options.loggerInstance
      ? { loggerInstance: options.loggerInstance }
      : { logger: options.logger ? { ...loggerOptions(settings), ...(options.logger === true ? {} : options.logger) } : false }),
    // X-Forwarded-For is believed only for as many hops as the operator says proxies add, so a
    // client cannot pick its own IP address (and escape per-IP rate limits) by sending one.
    trustProxy: (_address: string, hop: number) => hop < settings.TRUST_PROXY_HOPS,
    bodyLimit: 1024 * 1024,
%% if username %%
    // /users/<username>/: a username has up to 150 characters (each up to two UTF-16 units),
    // past Fastify's default of 100, which would refuse the longest ones their own URL.
    routerOptions: { maxParamLength: 300 },
%% endif %%
  });
  app.addHook('onRequest', latchkey.allowedHostsGuard);
  // Strict-Transport-Security on every HTTPS answer (SECURE_HSTS_SECONDS: a year in production).
  app.addHook('onRequest', latchkey.securityHeaders);
  // The site's error pages (templates/404.html, 500.html...: yours if you add them), JSON for JSON clients.
  app.setNotFoundHandler(latchkey.notFoundHandler);
  app.setErrorHandler(latchkey.errorHandler);
  app.addHook('onClose', () => latchkey.close());
  await app.register(latchkey.plugin, {
%% if use_drf %%
    // The API layer (generated with use_drf=y): the headless API for single-page and mobile apps...
    headless: true,
    // ... and the project's own /api/ views, with token and session authentication.
    api: { routes: (api) => registerUserApi(api, latchkey) },
%% endif %%
    routes(scope) {
      scope.get('/', (request, reply) => latchkey.renderPage(request, reply, 'pages/home.html'));
      registerUserPages(scope, latchkey);
    },
  });
%% if use_drf %%
  // /spa redirects to /spa/, whose relative links (app.js, style.css) need the trailing slash.
  await app.register(fastifyStatic, { root: SPA_DIRECTORY, prefix: '/spa', redirect: true, decorateReply: false, setHeaders: setSpaHeaders });
%% endif %%
  // Browsers ask for it on every page; answering keeps their consoles (and the logs) clean.
  app.get('/favicon.ico', (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());
  return app;
}
