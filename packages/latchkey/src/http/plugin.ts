import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { csrfOptionsFrom, csrfProtection } from './csrf.js';
import { handleUnexpectedError } from './error-handler.js';
import { registerAccountPages } from './pages/index.js';
import type { PageDeps } from './pages/page.js';

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
  routes?: (scope: FastifyInstance) => void | Promise<void>;
}

export function latchkeyPlugin(page: PageDeps): FastifyPluginAsync<LatchkeyPluginOptions> {
  const { settings } = page.deps;
  return async function latchkey(scope, options) {
    await scope.register(fastifyCookie);
    await scope.register(fastifyFormbody, { bodyLimit: 64 * 1024 });
    await scope.register(csrfProtection, csrfOptionsFrom(settings));
    // The default look's CSS, served from the library itself: no CDN.
    await scope.register(fastifyStatic, { root: fileURLToPath(new URL('../static/', import.meta.url)), prefix: '/static/latchkey/', decorateReply: false });
    scope.addHook('onRequest', (request, _reply, done) => {
      insideLatchkey.add(request);
      done();
    });
    scope.setErrorHandler(handleUnexpectedError);
    registerAccountPages(scope, page);
    if (options.routes) await options.routes(scope);
  };
}
