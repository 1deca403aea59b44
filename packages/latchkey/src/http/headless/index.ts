import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowCors } from '../kit/cors.js';
import { CSRF_HEADER, csrfOptionsFrom, csrfToken } from '../kit/csrf.js';
import type { PageDeps } from '../pages/page.js';
import { registerAccountEmailRoutes } from './account-email.js';
import { registerAuthRoutes } from './auth.js';
import { registerConfigRoute } from './config.js';
import { registerEmailVerificationRoutes } from './email-verification.js';
import { registerMfaRoutes } from './mfa.js';
import { registerPasswordRoutes } from './password.js';
import { registerSessionRoutes } from './sessions.js';
import { registerSpecificationRoutes } from './specification.js';
import { appSessionTransport, sentSessionToken, SESSION_TOKEN_HEADER, type HeadlessClient, type HeadlessContext } from './context.js';
import { sendErrors, sendUnauthenticated } from './respond.js';

/** Every group of routes, registered once per client under /_allauth/<client>/v1. */
const ROUTE_GROUPS: ((api: FastifyInstance, ctx: HeadlessContext) => void)[] = [
  registerConfigRoute,
  registerAuthRoutes,
  registerEmailVerificationRoutes,
  registerPasswordRoutes,
  registerAccountEmailRoutes,
  registerMfaRoutes,
  registerSessionRoutes,
];

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Keys a JSON body may not have: parsed into an object, `__proto__` (or a `constructor` with a
 * `prototype`) is the start of a prototype-pollution attack, and no operation has such a field.
 */
function refuseProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value)) {
    throw new Error('forbidden key');
  }
  return value;
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function isJson(request: FastifyRequest): boolean {
  return /^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '');
}

/**
 * One client's routes. The browser client is protected by the CSRF check of Latchkey's scope,
 * answered in the API's envelope; the app client needs none (no cookie authenticates it), and a
 * session token that names no live session is answered 410 on every route but config, so the
 * app knows to drop it and start again.
 */
function registerClient(api: FastifyInstance, ctx: HeadlessContext): void {
  api.addHook('onRoute', (route) => {
    route.config = {
      ...(route.config as object),
      ...(ctx.client === 'app' ? { csrf: false } : { csrfRefusal: (reply: FastifyReply, reason: string) => reply.send({ status: 403, errors: [{ message: `CSRF check failed: ${reason}`, code: 'csrf_failed' }] }) }),
    };
  });
  // An empty body with a JSON content type (a DELETE from a client that always sets the header)
  // is no body, not malformed JSON.
  api.removeContentTypeParser('application/json');
  api.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string, refuseProtoKeys));
    } catch {
      done(Object.assign(new Error('The request body is not valid JSON.'), { statusCode: 400 }), undefined);
    }
  });
  // Only JSON bodies: a form or text/plain body is what a cross-site page can send without asking.
  api.addHook('onRequest', async (request, reply) => {
    if (UNSAFE_METHODS.has(request.method) && hasBody(request) && !isJson(request)) {
      return sendErrors(ctx, request, reply, 415, [{ message: 'Send a JSON body (Content-Type: application/json).', code: 'unsupported_media_type' }]);
    }
    return undefined;
  });
  if (ctx.client === 'browser') {
    // Every answer makes sure the browser holds a CSRF cookie, for the front end to copy into X-CSRFToken.
    api.addHook('onRequest', async (request, reply) => {
      csrfToken(request, reply, csrfOptionsFrom(ctx.deps.settings));
    });
  }
  if (ctx.client === 'app') {
    api.addHook('preHandler', async (request, reply) => {
      if (request.routeOptions.url?.endsWith('/config') || !sentSessionToken(request)) return undefined;
      if (!(await ctx.sessions.session(request))) return sendUnauthenticated(ctx, request, reply, 410);
      return undefined;
    });
  }
  api.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) {
      // The real error may name tables, hosts or paths: it goes to the log, never to the client.
      request.log.error({ err: error }, 'headless request failed');
      return sendErrors(ctx, request, reply, 500, [{ message: 'A server error occurred.', code: 'server_error' }]);
    }
    // Fastify's own refusals of the request (malformed JSON, a body too large) describe the request.
    return sendErrors(ctx, request, reply, status, [{ message: status === 400 ? 'The request body is not valid JSON.' : error.message, code: 'invalid' }]);
  });
  for (const register of ROUTE_GROUPS) register(api, ctx);
}

/**
 * The headless API (allauth.headless's published contract) at /_allauth/{browser,app}/v1/, for
 * single-page and mobile apps. Its routes call the same flows as the pages; this layer only
 * reads JSON, carries the session (cookie or token) and answers in the contract's shapes.
 */
export async function registerHeadless(scope: FastifyInstance, page: PageDeps): Promise<void> {
  const { settings } = page.deps;
  await scope.register(
    async (headless) => {
      allowCors(headless, {
        origins: settings.CORS_ALLOWED_ORIGINS,
        allowHeaders: [SESSION_TOKEN_HEADER, 'x-email-verification-key', 'x-password-reset-key', CSRF_HEADER],
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      });
      if (settings.HEADLESS_SERVE_SPECIFICATION) registerSpecificationRoutes(headless, settings);
      headless.setNotFoundHandler((request, reply) => reply.code(404).header('cache-control', 'no-store').send({ status: 404 }));
      for (const client of ['browser', 'app'] as const satisfies HeadlessClient[]) {
        const transport = client === 'app' ? appSessionTransport() : undefined;
        const ctx: HeadlessContext = {
          deps: page.deps,
          client,
          sessions: transport ? page.sessions.withTransport(transport) : page.sessions,
          issuedToken: (request) => transport?.issuedToken(request),
        };
        await headless.register(
          (api, _options, done) => {
            registerClient(api, ctx);
            done();
          },
          { prefix: `/${client}/v1` },
        );
      }
    },
    { prefix: '/_allauth' },
  );
}
