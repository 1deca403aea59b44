import type { HttpContext } from '../kit/context.js';
import { REFERENCE_PAGE_POLICY } from '../kit/reference-page.js';
import { apiDocsHtml } from './docs.js';
import { apiOpenApiDocument } from './openapi.js';
import type { RegisteredView } from './view-runner.js';

export const API_SCHEMA_URL = '/api/schema/';
export const API_DOCS_URL = '/api/docs/';

/**
 * /api/schema/ and /api/docs/, for staff only as cookiecutter-django serves them: an anonymous
 * caller gets 403 (its docs authenticate by session, which has no challenge to offer), like a
 * signed-in user who is not staff. Both are rendered once, on first use, from the views as
 * registered; they describe the API, not themselves.
 */
export function schemaViews(ctx: HttpContext, views: readonly RegisteredView[]): RegisteredView[] {
  let document: Record<string, unknown> | undefined;
  let html: string | undefined;
  const documentOf = (): Record<string, unknown> => (document ??= apiOpenApiDocument(ctx.deps.settings, views));
  const options = { anonymousStatus: 403 } as const;
  return [
    {
      url: API_SCHEMA_URL,
      options,
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
    {
      url: API_DOCS_URL,
      options,
      view: {
        permission: 'staff',
        methods: {
          get: {
            summary: 'The API documentation',
            responses: { 200: { type: 'string' } },
            handler: (_request, reply) => {
              html ??= apiDocsHtml(documentOf(), { schema: ctx.deps.urls.mounted(API_SCHEMA_URL), stylesheet: ctx.deps.urls.static('latchkey.css') });
              reply.header('content-security-policy', REFERENCE_PAGE_POLICY).header('x-frame-options', 'DENY');
              return Promise.resolve(reply.header('x-content-type-options', 'nosniff').type('text/html; charset=utf-8').send(html));
            },
          },
        },
      },
    },
  ];
}
