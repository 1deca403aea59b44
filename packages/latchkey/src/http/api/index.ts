import type { FastifyInstance } from 'fastify';
import { LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { allowCors } from '../kit/cors.js';
import type { HttpContext } from '../kit/context.js';
import { CSRF_HEADER } from '../kit/csrf.js';
import { unexpectedErrorHandler } from '../kit/unexpected-errors.js';
import { AUTH_TOKEN_URL, authTokenView } from './auth-token.js';
import { registerApiBodyParsers, unsupportedMediaType } from './body.js';
import { NOT_FOUND, sendDetail } from './respond.js';
import { API_DOCS_URL, API_SCHEMA_URL, registerApiDocsPage, schemaViews } from './schema-views.js';
import { API_SCHEMAS, viewRouteSchema } from './route-schema.js';
import { registerApiDocument } from './api-document.js';
import { registerView, viewDefinitionProblem, type RegisteredView } from './view-runner.js';
import { answerInputProblemsInScope, declaredInputCompiler } from '../kit/declared-input.js';
import type { ApiOptions, ApiRoutes } from './views.js';

const RESERVED_URLS = new Set([AUTH_TOKEN_URL, API_SCHEMA_URL, API_DOCS_URL]);

/** SITE_URL + path: the configured address, never one read from the request's Host, which an attacker can forge. */
export function absoluteUrl(siteUrl: string, path: string): string {
  return `${siteUrl.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
}

/** Collects the project's views from its `api.routes` function; view() is refused once it has returned. */
async function projectViews(ctx: HttpContext, options: ApiOptions): Promise<RegisteredView[]> {
  const views: RegisteredView[] = [];
  const urls = new Set<string>();
  let open = true;
  const routes: ApiRoutes = {
    view(url, view) {
      if (!open) throw new LatchkeyError('configuration_invalid', 'api.view() can only be called while api.routes runs.');
      if (RESERVED_URLS.has(url)) throw new LatchkeyError('configuration_invalid', `${url} is Latchkey's own API route.`);
      const problem = viewDefinitionProblem(url, view);
      if (problem !== undefined) throw new LatchkeyError('configuration_invalid', problem);
      if (urls.has(url)) throw new LatchkeyError('configuration_invalid', `Two API views at ${url}: give each URL one view with all its methods.`);
      urls.add(url);
      views.push({ url, view, options: {} });
    },
    absoluteUrl: (path) => absoluteUrl(ctx.deps.settings.SITE_URL, ctx.deps.urls.mounted(path.startsWith('/') ? path : `/${path}`)),
  };
  await options.routes?.(routes);
  open = false;
  return views;
}

/**
 * Answers what goes wrong before a view runs in DRF's `{"detail": ...}` shape (kit/
 * unexpected-errors.ts keeps Fastify's 4xx and hides a 500's cause). A Content-Type Fastify cannot
 * even read is 415 and a body over the limit 413, each in DRF's words.
 */
const handleApiError = unexpectedErrorHandler(({ status, message, error }, request, reply) => {
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendDetail(reply, 415, unsupportedMediaType(request.headers['content-type']));
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendDetail(reply, 413, msg('Request body is too large.'));
  return sendDetail(reply, status, message);
});

/**
 * The API layer (a generated project's use_drf=y) at /api/: the project's views and Latchkey's
 * POST/DELETE /api/auth-token/, /api/schema/ and /api/docs/, in Django REST framework's shapes.
 * Its own scope: JSON and form bodies only, DRF's errors, no response cached, CORS for the
 * origins of CORS_ALLOWED_ORIGINS, and authentication by token or session per view.
 */
export async function registerApi(scope: FastifyInstance, ctx: HttpContext, options: ApiOptions): Promise<void> {
  const { settings } = ctx.deps;
  const views = [authTokenView(ctx), ...(await projectViews(ctx, options))];
  await scope.register(
    async (api) => {
      allowCors(api, {
        origins: settings.CORS_ALLOWED_ORIGINS,
        allowHeaders: ['authorization', CSRF_HEADER],
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      });
      registerApiBodyParsers(api);
      // Responses carry tokens and personal data: no browser or proxy may keep one.
      api.addHook('onRequest', (_request, reply, next) => {
        reply.header('cache-control', 'no-store');
        next();
      });
      api.setNotFoundHandler((_request, reply) => sendDetail(reply.header('cache-control', 'no-store'), 404, NOT_FOUND));
      api.setErrorHandler(handleApiError);
      // The views' schemas (route-schema.ts) document them, check the shape of their bodies
      // (kit/declared-input.ts), refused in DRF's shapes by the view runner, and write their answers
      // (Fastify's serialiser sends what an answer declares and nothing else).
      for (const shape of API_SCHEMAS) api.addSchema(shape);
      api.setValidatorCompiler(declaredInputCompiler(API_SCHEMAS));
      answerInputProblemsInScope(api);
      await registerApiDocument(api, settings);
      let document: Record<string, unknown> | undefined;
      const documentOf = (): Record<string, unknown> => (document ??= api.swagger() as unknown as Record<string, unknown>);
      const operationIds = new Set<string>();
      for (const registered of [...views, ...schemaViews(documentOf)]) registerView(api, ctx, registered, (method) => viewRouteSchema(registered, method, operationIds));
      registerApiDocsPage(api, ctx);
    },
    { prefix: '/api' },
  );
}
