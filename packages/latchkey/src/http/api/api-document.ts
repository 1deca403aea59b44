import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Settings } from '../../config/settings.js';

/**
 * The OpenAPI 3.0.3 document of the API layer, /api/schema/: made by @fastify/swagger from the
 * route schemas of the views (route-schema.ts), Latchkey's and the project's, with DRF's two
 * security schemes as drf-spectacular names them. Registered in the API's scope before the views,
 * whose routes it collects; a route that is not a view's operation (a 405, the docs page, a CORS
 * preflight) is left out.
 */
export async function registerApiDocument(api: FastifyInstance, settings: Settings): Promise<void> {
  await api.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: `${settings.SITE_NAME} API`, version: '1.0.0', description: `The API of ${settings.SITE_NAME}.` },
      // Under URL_PREFIX the paths are relative to it.
      ...(settings.URL_PREFIX === '' ? {} : { servers: [{ url: settings.URL_PREFIX }] }),
      components: {
        securitySchemes: {
          tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token-based authentication with required prefix "Token"' },
          cookieAuth: { type: 'apiKey', in: 'cookie', name: settings.SESSION_COOKIE_NAME },
        },
      },
    },
    // The named shapes (Error, ValidationError) keep their names in components.schemas.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`) },
    transform: ({ schema, url }) => {
      const documented = schema !== undefined && typeof (schema as { operationId?: unknown }).operationId === 'string';
      return { schema: documented ? schema : { ...schema, hide: true }, url: url.slice(settings.URL_PREFIX.length) };
    },
  });
}
