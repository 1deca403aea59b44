import type { FastifyInstance, FastifyReply } from 'fastify';
import { stringify } from 'yaml';
import type { HttpContext } from '../kit/context.js';
import { registerInteractiveDocsPage } from '../kit/interactive-docs.js';
import { headlessOpenApiDocument } from './openapi.js';

/**
 * The document changes only when the server restarts with other settings, and holds nothing
 * personal: tools and browsers may keep it a few minutes.
 */
const CACHE_CONTROL = 'public, max-age=300';

function send(reply: FastifyReply, type: string, body: string): FastifyReply {
  return reply.header('cache-control', CACHE_CONTROL).header('x-content-type-options', 'nosniff').type(type).send(body);
}

/**
 * /_allauth/openapi.json and .yaml: Latchkey's description of this API, public as allauth serves
 * its own (HEADLESS_SERVE_SPECIFICATION), for tools and client generators; rendered once, at
 * start-up, as it depends on the settings alone. /_allauth/openapi.html is the interactive docs
 * of the same document, for signed-in staff (kit/interactive-docs.ts).
 */
export function registerSpecificationRoutes(headless: FastifyInstance, site: HttpContext, customStageIds: readonly string[]): void {
  const { settings, urls } = site.deps;
  const document = headlessOpenApiDocument(settings, customStageIds);
  const json = JSON.stringify(document, null, 2);
  const yaml = stringify(document, { aliasDuplicateObjects: false });
  headless.get('/openapi.json', (_request, reply) => send(reply, 'application/json; charset=utf-8', json));
  headless.get('/openapi.yaml', (_request, reply) => send(reply, 'application/yaml; charset=utf-8', yaml));
  registerInteractiveDocsPage(headless, site, '/openapi.html', {
    title: `${settings.SITE_NAME}: headless API`,
    documentUrl: urls.mounted('/_allauth/openapi.json'),
    links: [
      { href: urls.mounted('/_allauth/openapi.json'), text: 'openapi.json' },
      { href: urls.mounted('/_allauth/openapi.yaml'), text: 'openapi.yaml' },
    ],
  });
}
