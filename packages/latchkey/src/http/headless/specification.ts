import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { stringify } from 'yaml';
import type { HttpContext } from '../kit/context.js';
import { registerInteractiveDocsPage } from '../kit/interactive-docs.js';
import { answers, CLIENT_PARAMETER, SESSION_TOKEN_PARAMETER, TAGS } from './operation-schema.js';

type Json = Record<string, unknown>;

/**
 * The document changes only when the server restarts with other settings, and holds nothing
 * personal: tools and browsers may keep it a few minutes.
 */
const CACHE_CONTROL = 'public, max-age=300';

const DESCRIPTION = `The JSON API for single-page and mobile apps, at \`/_allauth/{client}/v1/\`. It follows the published contract of allauth.headless, so clients written for it work here unchanged; this document lists what this server offers.

**Two clients.** \`browser\`: the session travels in the session cookie, and every state-changing request carries the \`csrftoken\` cookie's value in the \`X-CSRFToken\` header (without it: 403). \`app\`: no cookies; the session token from \`meta.session_token\` goes in the \`X-Session-Token\` header. When the token names no live session the answer is 410: drop it and start again.

**Envelope.** Every answer is JSON with the HTTP status repeated in \`status\`, and \`data\`, \`meta\` or \`errors\` (\`[{message, code, param}]\`). 401 lists the \`flows\` that can sign someone in, the one a login waits at marked \`is_pending\`; 401 for a signed-in user means a fresh proof of identity is needed first. Too many attempts answer 429 with \`Retry-After\`. Request bodies are JSON only (else 415), but for the provider redirect, a real form post. Nothing is cached (\`Cache-Control: no-store\`).`;

/** A route of one client: `/_allauth/<client>/v1<path>`, under URL_PREFIX. */
const CLIENT_ROUTE = /^\/_allauth\/(browser|app)\/v1(\/.*)$/;

function send(reply: FastifyReply, type: string, body: string): FastifyReply {
  return reply.header('cache-control', CACHE_CONTROL).header('x-content-type-options', 'nosniff').type(type).send(body);
}

/** `postAuthLogin` for POST /auth/login: the operation's id, the same for both clients. */
const operationId = (method: string, path: string): string => `${method}${path.replace(/[^a-z0-9]+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase())}`;

/**
 * What a route of both clients adds to its own declaration: the `{client}` it is served for and,
 * on every route but config, the app's session token and the 410 that says it names no session.
 */
function forEitherClient(schema: Json, path: string): Json {
  const params = schema.params as { properties?: Json; required?: string[] } | undefined;
  const withClient: Json = { ...schema, params: { type: 'object', properties: { client: CLIENT_PARAMETER, ...params?.properties }, required: ['client', ...(params?.required ?? [])] } };
  if (path === '/config') return withClient;
  const headers = schema.headers as { properties?: Json; required?: string[] } | undefined;
  return {
    ...withClient,
    headers: { type: 'object', properties: { ...headers?.properties, 'X-Session-Token': SESSION_TOKEN_PARAMETER }, required: headers?.required ?? [] },
    response: { ...(schema.response as Json), 410: answers.SessionGone },
  };
}

/**
 * /_allauth/openapi.json and .yaml: the OpenAPI 3.0.3 document of this API, made by
 * @fastify/swagger from the routes' own schemas (operation-schema.ts) and the named shapes
 * (schemas.ts), public as allauth serves its own (HEADLESS_SERVE_SPECIFICATION), for tools and
 * client generators. Each route is registered once per client; the document names it once, as
 * allauth's does, under `/_allauth/{client}/v1/...`, and a route of the browser client alone (the
 * provider redirect, trusting a browser) under its own path. /_allauth/openapi.html is the
 * interactive docs of the same document, for signed-in staff (kit/interactive-docs.ts).
 * Registered before the clients' routes, which it collects.
 */
export async function registerSpecificationRoutes(headless: FastifyInstance, site: HttpContext): Promise<void> {
  const { settings, urls } = site.deps;
  const appRoutes = new Set<string>();
  headless.addHook('onRoute', (route) => {
    const match = CLIENT_ROUTE.exec(route.url.slice(settings.URL_PREFIX.length));
    if (match?.[1] === 'app') for (const method of [route.method].flat()) appRoutes.add(`${method.toLowerCase()} ${match[2]}`);
  });
  await headless.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: `${settings.SITE_NAME}: headless API`, version: '1', description: DESCRIPTION },
      // The site's origin and where Latchkey is mounted (URL_PREFIX): the paths are relative to it.
      servers: [{ url: `${new URL('/', settings.SITE_URL).toString().replace(/\/$/, '')}${settings.URL_PREFIX}` }],
      tags: TAGS.map((tag) => ({ ...tag })),
    },
    // The named shapes keep their names in components.schemas.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`) },
    transform: ({ schema, url, route }) => {
      const match = CLIENT_ROUTE.exec(url.slice(settings.URL_PREFIX.length));
      const method = String(route.method).toLowerCase();
      if (!match || schema === undefined || !['get', 'post', 'put', 'patch', 'delete'].includes(method)) return { schema: { ...schema, hide: true }, url };
      const [, client, path] = match as unknown as [string, string, string];
      const documented = { ...(schema as Json), operationId: operationId(method, path.replace(/:([a-z]+)/g, '{$1}')) };
      if (!appRoutes.has(`${method} ${path}`)) return { schema: documented, url: `/_allauth/${client}/v1${path}` };
      if (client === 'app') return { schema: { ...schema, hide: true }, url };
      return { schema: forEitherClient(documented, path), url: `/_allauth/{client}/v1${path}` };
    },
  });
  let rendered: { json: string; yaml: string } | undefined;
  const documentOf = (): { json: string; yaml: string } => {
    if (rendered === undefined) {
      const document = headless.swagger() as unknown as Json;
      rendered = { json: JSON.stringify(document, null, 2), yaml: stringify(document, { aliasDuplicateObjects: false }) };
    }
    return rendered;
  };
  const hidden = { schema: { hide: true } };
  headless.get('/openapi.json', hidden, (_request, reply) => send(reply, 'application/json; charset=utf-8', documentOf().json));
  headless.get('/openapi.yaml', hidden, (_request, reply) => send(reply, 'application/yaml; charset=utf-8', documentOf().yaml));
  registerInteractiveDocsPage(headless, site, '/openapi.html', {
    title: `${settings.SITE_NAME}: headless API`,
    documentUrl: urls.mounted('/_allauth/openapi.json'),
    links: [
      { href: urls.mounted('/_allauth/openapi.json'), text: 'openapi.json' },
      { href: urls.mounted('/_allauth/openapi.yaml'), text: 'openapi.yaml' },
    ],
  });
}
