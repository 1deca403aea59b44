import { msg } from '../../core/i18n/message.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allowCors } from '../kit/cors.js';
import { CSRF_HEADER, csrfOptionsFrom, csrfToken } from '../kit/csrf.js';
import { registerAccountEmailRoutes } from './account-email.js';
import { registerAuthRoutes } from './auth.js';
import { registerConfigRoute } from './config.js';
import { registerEmailVerificationRoutes } from './email-verification.js';
import { registerLoginCodeRoutes } from './login-code.js';
import { customStageIds, registerLoginStageRoutes } from './login-stage.js';
import { registerMfaRoutes } from './mfa.js';
import { registerPasswordRoutes } from './password.js';
import { registerSessionRoutes } from './sessions.js';
import { callbackWithoutFrontend, PROVIDER_REDIRECT_PATH, registerSocialAccountRoutes } from './socialaccount.js';
import { headlessSchemas } from './schemas.js';
import { apiUserFields } from './user.js';
import { registerSpecificationRoutes } from './specification.js';
import type { HttpClient, HttpContext } from '../kit/context.js';
import { parseJson } from '../kit/input.js';
import { signupUserFields } from '../../config/signup-fields.js';
import { registerProviderCallbacks } from '../social/provider-callback.js';
import { registerSamlEndpoints } from '../social/saml-endpoints.js';
import { unexpectedErrorHandler } from '../kit/unexpected-errors.js';
import { answerInputProblemsInScope, declaredInputCompiler, inputProblemsOf } from '../kit/declared-input.js';
import { headlessInputErrors } from './input-problems.js';
import { appSessionTransport, sentSessionToken, SESSION_TOKEN_HEADER } from './app-transport.js';
import { sendErrors, sendUnauthenticated } from './respond.js';

/** Every group of routes, registered once per client under /_allauth/<client>/v1. */
const ROUTE_GROUPS: ((api: FastifyInstance, ctx: HttpContext) => void)[] = [
  registerConfigRoute,
  registerAuthRoutes,
  registerLoginCodeRoutes,
  registerLoginStageRoutes,
  registerEmailVerificationRoutes,
  registerPasswordRoutes,
  registerAccountEmailRoutes,
  registerMfaRoutes,
  registerSessionRoutes,
  registerSocialAccountRoutes,
];

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function isJson(request: FastifyRequest): boolean {
  return /^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '');
}

/**
 * The one operation a browser reaches by a real form post (it answers with a redirect to the
 * provider, which an XHR could not follow): its form is accepted, and the CSRF check still
 * applies (the token in the form's csrfmiddlewaretoken field).
 */
function isFormOperation(ctx: HttpContext, request: FastifyRequest): boolean {
  return isProviderRedirect(ctx, request) && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(request.headers['content-type'] ?? '');
}

function isProviderRedirect(ctx: HttpContext, request: FastifyRequest): boolean {
  return request.routeOptions.url === ctx.deps.urls.mounted(`/_allauth/browser/v1${PROVIDER_REDIRECT_PATH}`);
}

/**
 * One client's routes. The browser client is protected by the CSRF check of Latchkey's scope,
 * answered in the API's envelope; the app client needs none (no cookie authenticates it), and a
 * session token that names no live session is answered 410 on every route but config, so the
 * app knows to drop it and start again.
 */
function registerClient(api: FastifyInstance, ctx: HttpContext): void {
  api.addHook('onRoute', (route) => {
    route.config = {
      ...(route.config as object),
      ...(ctx.client === 'app' ? { csrf: false } : { csrfRefusal: (reply: FastifyReply, reason: string) => reply.send({ status: 403, errors: [{ message: `CSRF check failed: ${reason}`, code: 'csrf_failed' }] }) /* a developer's mistake, not a person's: English, as Django's CSRF failure reasons */ }),
    };
  });
  // An empty body with a JSON content type (a DELETE from a client that always sets the header)
  // is no body, not malformed JSON.
  api.removeContentTypeParser('application/json');
  api.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, parseJson(body as string));
    } catch {
      done(Object.assign(new Error('The request body is not valid JSON.'), { statusCode: 400 }), undefined);
    }
  });
  // Only JSON bodies: a form or text/plain body is what a cross-site page can send without asking
  // (the provider redirect's form aside, which carries the CSRF token).
  api.addHook('onRequest', async (request, reply) => {
    if (UNSAFE_METHODS.has(request.method) && hasBody(request) && !isJson(request) && !isFormOperation(ctx, request)) {
      return sendErrors(ctx, request, reply, 415, [{ message: msg('Send a JSON body (Content-Type: application/json).'), code: 'unsupported_media_type' }]);
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
  // What the route's declaration refused, answered once the request is known to be allowed at all
  // (the CSRF check, a live app session): kit/declared-input.ts. The provider redirect answers
  // its own: the browser left the front end with that form post, so bad input is sent back to a
  // safe callback_url, as allauth does, rather than shown as JSON.
  api.addHook('preHandler', async (request, reply) => {
    const problems = isProviderRedirect(ctx, request) ? undefined : inputProblemsOf(request);
    return problems ? sendErrors(ctx, request, reply, 400, headlessInputErrors(problems)) : undefined;
  });
  // Fastify's own refusals of the request (malformed JSON, a body too large) describe the request.
  api.setErrorHandler(
    unexpectedErrorHandler(({ status, message }, request, reply) => {
      if (status === 500) return sendErrors(ctx, request, reply, 500, [{ message, code: 'server_error' }]);
      // The database is away for a moment: the code a flow's own refusal uses when it cannot go on.
      if (status === 503) return sendErrors(ctx, request, reply, 503, [{ message, code: 'server_busy' }]);
      return sendErrors(ctx, request, reply, status, [{ message: status === 400 ? msg('The request body is not valid JSON.') : message, code: 'invalid' }]);
    }),
  );
  for (const register of ROUTE_GROUPS) register(api, ctx);
}

/**
 * The headless API (allauth.headless's published contract) at /_allauth/{browser,app}/v1/, for
 * single-page and mobile apps. Its routes call the same flows as the pages; this layer only
 * reads JSON, carries the session (cookie or token) and answers in the contract's shapes.
 */
export async function registerHeadless(scope: FastifyInstance, site: HttpContext): Promise<void> {
  const { settings } = site.deps;
  await scope.register(
    async (headless) => {
      allowCors(headless, {
        origins: settings.CORS_ALLOWED_ORIGINS,
        allowHeaders: [SESSION_TOKEN_HEADER, 'x-email-verification-key', 'x-password-reset-key', CSRF_HEADER],
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      });
      // Each route's schema (operation-schema.ts) documents it, checks the shape of its input
      // (kit/declared-input.ts; each flow checks what the input means, refusing in the same
      // envelope) and writes its answers: Fastify's serialiser sends what an answer declares and
      // nothing else, so no field reaches a client that the contract does not name.
      const shapes = headlessSchemas(customStageIds(site.deps), signupUserFields(site.deps.settings.ACCOUNT_SIGNUP_FIELDS, site.deps.userFields), apiUserFields(site.deps.userFields));
      for (const shape of shapes) headless.addSchema(shape);
      headless.setValidatorCompiler(declaredInputCompiler(shapes));
      answerInputProblemsInScope(headless);
      if (settings.HEADLESS_SERVE_SPECIFICATION) await registerSpecificationRoutes(headless, site);
      headless.setNotFoundHandler((request, reply) => reply.code(404).header('cache-control', 'no-store').send({ status: 404 }));
      for (const client of ['browser', 'app'] as const satisfies HttpClient[]) {
        const sessions = client === 'app' ? site.sessions.withTransport(appSessionTransport()) : site.sessions;
        const ctx: HttpContext = { deps: site.deps, client, sessions };
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
  // Without the pages, the provider callbacks are still needed (the providers are registered with
  // them): each returns the browser to the front end that started the sign-in.
  if (settings.HEADLESS_ONLY) {
    registerProviderCallbacks(scope, site, callbackWithoutFrontend(site));
    registerSamlEndpoints(scope, site, callbackWithoutFrontend(site));
  }
}
