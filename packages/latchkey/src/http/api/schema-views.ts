import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import { registerInteractiveDocsPage } from '../kit/interactive-docs.js';
import type { RegisteredView } from './view-runner.js';

export const API_SCHEMA_URL = '/api/schema/';
export const API_DOCS_URL = '/api/docs/';

/**
 * /api/schema/, for staff only as cookiecutter-django serves it: an anonymous caller gets 403 (a
 * tool authenticates by token or session, and the session has no challenge to offer), like a
 * signed-in user who is not staff. It serves `documentOf()`, the document made from the views'
 * declarations; it describes the API, not itself.
 */
export function schemaViews(documentOf: () => Record<string, unknown>): RegisteredView[] {
  return [
    {
      url: API_SCHEMA_URL,
      options: { anonymousStatus: 403, documented: false },
      view: {
        permission: 'staff',
        methods: {
          get: {
            summary: 'The OpenAPI schema',
            responses: { 200: { type: 'object' } },
            handler: (_request, reply) => Promise.resolve(reply.type('application/json; charset=utf-8').send(JSON.stringify(documentOf(), null, 2))),
          },
        },
      },
    },
  ];
}

/**
 * /api/docs/: the interactive docs of /api/schema/, a page for signed-in staff (a visitor is sent to
 * the login, anyone else gets 403), where "Try it out" calls the API with the session or a token.
 */
export function registerApiDocsPage(api: FastifyInstance, ctx: HttpContext): void {
  registerInteractiveDocsPage(api, ctx, API_DOCS_URL.replace(/^\/api/, ''), {
    title: `${ctx.deps.settings.SITE_NAME} API`,
    documentUrl: ctx.deps.urls.mounted(API_SCHEMA_URL),
    links: [{ href: ctx.deps.urls.mounted(API_SCHEMA_URL), text: 'OpenAPI schema (JSON)' }],
  });
}
