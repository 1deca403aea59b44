import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../core/errors.js';
import { csrfOptionsFrom, csrfProtection } from './kit/csrf.js';
import { sendReferrerPolicy } from './kit/referrer-policy.js';
import { requestUser } from './kit/request-user.js';
import { errorPageHandlers, sendErrorPage } from './kit/error-pages.js';
import { registerAccountPages } from './pages/index.js';
import { negotiateRequestLanguage } from './kit/request-language.js';
import { msgid } from '../core/i18n/message.js';
import { registerAdmin } from './admin/index.js';
import type { HttpContext } from './kit/context.js';
import { STATIC_PATH } from '../config/url-names.js';
import type { ApiOptions } from './api/views.js';
import { registerHealthCheck, type ServiceChecks } from './health.js';
import { registerInteractiveDocsAssets } from './kit/interactive-docs.js';

/** Requests routed inside Latchkey's scope, where cookies are parsed and CSRF is checked. */
const insideLatchkey = new WeakSet<FastifyRequest>();

export function isInsideLatchkeyScope(request: FastifyRequest): boolean {
  return insideLatchkey.has(request);
}

/**
 * The parts of the library that the account pages, the headless API, the token API and the admin
 * share, as one encapsulated Fastify plugin: cookie and form parsing and CSRF protection apply
 * to the routes registered inside it and never to the project's own routes. Later features add
 * their routes here.
 *
 * A project whose own forms need the same protection (a profile page, say) registers them inside
 * this scope: `app.register(latchkey.plugin, { routes: (scope) => { scope.post(...) } })`.
 */
export interface LatchkeyPluginOptions {
  /**
   * The project's own routes, registered inside Latchkey's scope at the paths they give: under the
   * Fastify prefix the plugin was registered with, if any, but not moved under URL_PREFIX.
   */
  routes?: (scope: FastifyInstance) => void | Promise<void>;
  /**
   * Serve the headless API for single-page and mobile apps at /_allauth/{browser,app}/v1/
   * (a generated project's API layer, `use_drf=y`). Off by default: nothing of it is loaded.
   */
  headless?: boolean;
  /**
   * Serve the API layer at /api/ (a generated project's `use_drf=y`): token and session
   * authentication in Django REST framework's shapes, POST/DELETE /api/auth-token/, the OpenAPI
   * schema and docs, and the project's own views, declared in `routes` (docs/api.md). Without it
   * nothing under /api/ exists and nothing of the API layer is loaded.
   */
  api?: ApiOptions;
  /**
   * Serve the admin area at ADMIN_URL (on unless false). It finishes logins and reauthenticates
   * through the account pages, so it is never served under HEADLESS_ONLY.
   */
  admin?: boolean;
  /**
   * Serve GET /health/ (http/health.ts): the database and Redis answer or not, for load balancers.
   * On unless false (a project with a /health/ of its own turns it off).
   */
  health?: boolean;
}

/**
 * Where the plugin's scope already is: the Fastify prefix the project registered it with (and
 * those of the scopes around it), without a trailing slash.
 */
function fastifyPrefixOf(scope: FastifyInstance): string {
  return scope.prefix.replace(/\/+$/, '');
}

export function latchkeyPlugin(ctx: HttpContext, serviceChecks: ServiceChecks): FastifyPluginAsync<LatchkeyPluginOptions> {
  const { settings } = ctx.deps;
  return async function latchkey(scope, options) {
    // Latchkey mounts itself at URL_PREFIX, which its links carry: a Fastify prefix of the
    // project's own would move its routes away from every link, form and mailed URL it makes.
    const given = fastifyPrefixOf(scope);
    if (given !== '' && given !== settings.URL_PREFIX) {
      throw new LatchkeyError(
        'configuration_invalid',
        `latchkey.plugin is registered under the Fastify prefix "${given}" but URL_PREFIX is "${settings.URL_PREFIX}": its links would not lead to its pages. ` +
          `Set URL_PREFIX (LATCHKEY_URL_PREFIX) to "${given}" and register the plugin without a prefix (Latchkey mounts itself there) or with that same prefix.`,
      );
    }
    await scope.register(fastifyCookie);
    await scope.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
    const errorPages = errorPageHandlers(ctx.deps);
    await scope.register(csrfProtection, {
      ...csrfOptionsFrom(settings),
      // Django's CSRF failure page: the site's 403.html, with the reason (a fixed sentence, never the request's).
      forbiddenPage: (request, reply, reason) => sendErrorPage(ctx.deps, request, reply, 403, { message: msgid('CSRF verification failed. Request aborted.'), reason }),
    });
    // request.user, for the project's routes as for Latchkey's: read only when something asks.
    scope.decorateRequest('user', {
      getter(this: FastifyRequest) {
        return requestUser(ctx.sessions, this);
      },
    });
    scope.addHook('onRequest', (request, _reply, done) => {
      insideLatchkey.add(request);
      // The request's language, worked out once: flows get it with the client (clientOf), for a
      // mail to someone who has not chosen one.
      negotiateRequestLanguage(ctx.deps, request);
      done();
    });
    scope.addHook('onRequest', sendReferrerPolicy);
    // The site's error pages (500.html...) for the pages, the admin and the project's routes in here.
    scope.setErrorHandler(errorPages.errorHandler);
    // No setNotFoundHandler here: from a scope without a prefix Fastify would replace the whole
    // app's 404 handler, with this scope's hooks, and refuse the project's own. The project sets
    // latchkey.notFoundHandler on its app instead, one line.
    // HEADLESS_ONLY: the project's own front end is the only interface, so the pages are never
    // registered and the account pages' paths answer 404 like any path nobody serves. Start-up has made sure
    // that emails link to the front end instead (config/load.ts); without the API, nobody could sign in.
    if (settings.HEADLESS_ONLY && !options.headless) {
      throw new LatchkeyError('configuration_invalid', 'HEADLESS_ONLY is true but the headless API is not registered: pass { headless: true } to latchkey.plugin.');
    }
    // Everything of Latchkey's under URL_PREFIX: in a scope of that prefix (the plugin's own, when
    // the project registered it there), inside this one, so that cookies, CSRF and the hooks apply.
    const serveLatchkey = async (mount: FastifyInstance) => {
      // The default look's CSS, served from the library itself: no CDN.
      await mount.register(fastifyStatic, { root: fileURLToPath(new URL('../static/', import.meta.url)), prefix: STATIC_PATH, decorateReply: false });
      // Swagger UI, for the interactive API docs (/api/docs/, /_allauth/openapi.html): from the package, no CDN.
      if (options.api || (options.headless && settings.HEADLESS_SERVE_SPECIFICATION)) registerInteractiveDocsAssets(mount);
      if (options.health !== false) registerHealthCheck(mount, serviceChecks);
      if (!settings.HEADLESS_ONLY) registerAccountPages(mount, ctx);
      if (!settings.HEADLESS_ONLY && options.admin !== false) registerAdmin(mount, ctx, { apiTokens: options.api !== undefined });
      if (options.headless) {
        const { registerHeadless } = await import('./headless/index.js');
        await registerHeadless(mount, ctx);
      }
      if (options.api) {
        const { registerApi } = await import('./api/index.js');
        await registerApi(mount, ctx, options.api);
      }
    };
    if (given === settings.URL_PREFIX) await serveLatchkey(scope);
    else await scope.register(serveLatchkey, { prefix: settings.URL_PREFIX });
    // The project's own routes stay where the project registered the plugin.
    if (options.routes) await options.routes(scope);
  };
}
