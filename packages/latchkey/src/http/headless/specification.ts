import type { FastifyInstance, FastifyReply } from 'fastify';
import { stringify } from 'yaml';
import type { Settings } from '../../config/settings.js';
import { latchkeyUrls } from '../../config/url-names.js';
import { escapeHtml, prose, REFERENCE_PAGE_POLICY, referencePageHtml } from '../kit/reference-page.js';
import { headlessOpenApiDocument, type HttpMethod } from './openapi.js';

type Json = Record<string, unknown>;

/**
 * The document changes only when the server restarts with other settings, and holds nothing
 * personal: tools and browsers may keep it a few minutes.
 */
const CACHE_CONTROL = 'public, max-age=300';

/** The object a `$ref` points at (the document's own refs only: `#/components/...`). */
function resolve(document: Json, node: unknown): Json {
  const target = node as Json;
  if (typeof target.$ref !== 'string') return target;
  let current: unknown = document;
  for (const segment of target.$ref.replace(/^#\//, '').split('/')) current = (current as Json)[segment];
  return resolve(document, current);
}

function fieldList(document: Json, requestBody: unknown): string {
  if (requestBody === undefined) return '';
  const body = resolve(document, requestBody);
  const [contentType, content] = Object.entries(body.content as Json)[0] as [string, Json];
  const bodySchema = resolve(document, content.schema);
  const required = new Set((bodySchema.required as string[] | undefined) ?? []);
  const fields = Object.entries((bodySchema.properties as Json | undefined) ?? {}).map(([name, property]) => {
    const resolved = resolve(document, property);
    const type = typeof resolved.type === 'string' ? resolved.type : 'value';
    const description = typeof resolved.description === 'string' ? `: ${prose(resolved.description)}` : '';
    return `<li><code>${escapeHtml(name)}</code> (${type}${required.has(name) ? ', required' : ''})${description}</li>`;
  });
  return `<p>${contentType === 'application/json' ? 'JSON body' : 'Form body'}:</p><ul>${fields.join('')}</ul>`;
}

function operationHtml(document: Json, path: string, method: string, operation: Json): string {
  const parameters = ((operation.parameters as unknown[] | undefined) ?? []).map((parameter) => resolve(document, parameter));
  const headers = parameters.filter((parameter) => parameter.in === 'header');
  const responses = Object.entries(operation.responses as Json).map(
    ([code, response]) => `<tr><td>${escapeHtml(code)}</td><td>${prose(String(resolve(document, response).description))}</td></tr>`,
  );
  return [
    `<section class="lk-section" id="${escapeHtml(String(operation.operationId))}">`,
    `<h3><code>${method.toUpperCase()} ${escapeHtml(path)}</code></h3>`,
    `<p><strong>${prose(String(operation.summary))}.</strong> ${prose(String(operation.description))}</p>`,
    headers.length > 0 ? `<p>Headers:</p><ul>${headers.map((header) => `<li><code>${escapeHtml(String(header.name))}</code>${header.required ? ' (required)' : ''}: ${prose(String(header.description))}</li>`).join('')}</ul>` : '',
    fieldList(document, operation.requestBody),
    `<table class="lk-table"><thead><tr><th>status</th><th>meaning</th></tr></thead><tbody>${responses.join('')}</tbody></table>`,
    '</section>',
  ].join('\n');
}

/** A plain page listing every operation by tag, for people; the JSON and YAML are for tools. */
export function specificationHtml(document: Json, stylesheet: string): string {
  const info = document.info as { title: string; description: string };
  const paths = document.paths as Record<string, Record<HttpMethod, Json>>;
  const sections = (document.tags as { name: string; description: string }[]).map((tag) => {
    const operations = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => (operation.tags as string[]).includes(tag.name))
        .map(([method, operation]) => operationHtml(document, path, method, operation)),
    );
    return `<h2>${escapeHtml(tag.name)}</h2>\n<p>${prose(tag.description)}</p>\n${operations.join('\n')}`;
  });
  const description = info.description.split('\n\n').map((paragraph) => `<p>${prose(paragraph).replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')}</p>`);
  return referencePageHtml({
    title: info.title,
    stylesheet,
    links: [
      { href: 'openapi.json', text: 'openapi.json' },
      { href: 'openapi.yaml', text: 'openapi.yaml' },
    ],
    introduction: description.join('\n'),
    sections,
  });
}

function send(reply: FastifyReply, type: string, body: string): FastifyReply {
  return reply.header('cache-control', CACHE_CONTROL).header('x-content-type-options', 'nosniff').type(type).send(body);
}

/**
 * /_allauth/openapi.json, .yaml and .html: Latchkey's description of this API
 * (HEADLESS_SERVE_SPECIFICATION). Rendered once, at start-up: it depends on the settings alone.
 */
export function registerSpecificationRoutes(headless: FastifyInstance, settings: Settings, customStageIds: readonly string[]): void {
  const document = headlessOpenApiDocument(settings, customStageIds);
  const json = JSON.stringify(document, null, 2);
  const yaml = stringify(document, { aliasDuplicateObjects: false });
  const html = specificationHtml(document, latchkeyUrls(settings).static('latchkey.css'));
  headless.get('/openapi.json', (_request, reply) => send(reply, 'application/json; charset=utf-8', json));
  headless.get('/openapi.yaml', (_request, reply) => send(reply, 'application/yaml; charset=utf-8', yaml));
  headless.get('/openapi.html', (_request, reply) =>
    send(reply.header('content-security-policy', REFERENCE_PAGE_POLICY).header('x-frame-options', 'DENY'), 'text/html; charset=utf-8', html),
  );
}
