import { STATUS_CODES } from 'node:http';
import type { FastifySchema } from 'fastify';
import { authenticationModeOf, permissionOf, type RegisteredView } from './view-runner.js';
import type { ApiMethod, ApiOperation, JsonSchema } from './views.js';

/**
 * What a view's method declares about itself (views.ts: its summary, description, body and
 * answers; the view's tag and permission), as the Fastify `schema` of its route. The API's
 * OpenAPI document (/api/schema/) is made from these by @fastify/swagger (index.ts), so a
 * project's view is documented by declaring it. The same schemas check the shape of a body
 * (kit/declared-input.ts, refused in DRF's shapes by the view runner) and write a view's answers:
 * Fastify's serialiser sends the fields an answer declares and no others (an object declared
 * without properties is sent whole). Refusals are DRF's fixed shapes, sent as built (respond.ts).
 */

type Json = Record<string, unknown>;

/** drf-spectacular's names for the methods, used in derived operationIds (`users_me_retrieve`). */
const ACTIONS: Record<ApiMethod, string> = { get: 'retrieve', post: 'create', put: 'update', patch: 'partial_update', delete: 'destroy' };
const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded'];
const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** The shapes views refer to as `#/components/schemas/<name>`, added to the API's scope under those names. */
export const API_SCHEMAS: Json[] = [
  { $id: 'Error', type: 'object', required: ['detail'], properties: { detail: { type: 'string' } } },
  {
    $id: 'ValidationError',
    type: 'object',
    description: 'The messages for each field by its name, and for the input as a whole under non_field_errors.',
    additionalProperties: { type: 'array', items: { type: 'string' } },
  },
];

function derivedOperationId(url: string, method: ApiMethod): string {
  const words = url
    .replace(/^\/api\//, '')
    .split('/')
    .filter((segment) => segment !== '' && !segment.startsWith(':'))
    .map((segment) => segment.replace(/[^A-Za-z0-9]+/g, '_'));
  return [...words, ACTIONS[method]].join('_');
}

/** `{ description }` alone describes a status without a body; anything else is the body's schema. */
function isBodyless(response: JsonSchema | { description: string }): response is { description: string } {
  const keys = Object.keys(response);
  return keys.length === 1 && keys[0] === 'description';
}

/**
 * A view's `#/components/schemas/Error` (or ValidationError), anywhere in a schema, as the named
 * shape it is in this scope (`Error#`): @fastify/swagger lists it under the same name.
 */
function named(schema: JsonSchema): JsonSchema {
  const rename = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rename);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => {
        const match = key === '$ref' && typeof value === 'string' ? /^#\/components\/schemas\/(Error|ValidationError)$/.exec(value) : null;
        return [key, match ? `${match[1]}#` : rename(value)];
      }),
    );
  };
  return rename(schema) as JsonSchema;
}

/**
 * A schema as the serialiser should read it: an object declared without `properties` (or
 * `additionalProperties`) says nothing of its fields, so it is sent whole rather than as `{}`.
 */
function serialisable(schema: JsonSchema): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const copy: Json = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value)]));
    const isObject = copy.type === 'object' || (Array.isArray(copy.type) && copy.type.includes('object'));
    return isObject && copy.properties === undefined && copy.additionalProperties === undefined ? { ...copy, additionalProperties: true } : copy;
  };
  return walk(schema) as JsonSchema;
}

function responsesOf(operation: ApiOperation, permission: string, authenticated: boolean): Json {
  const responses: Json = {};
  const given: [string, JsonSchema | { description: string }][] = Object.entries(operation.responses);
  // Refusals every protected operation can give, unless the view describes them itself.
  if (authenticated && permission !== 'allow_any') given.push(['401', ERROR_REF]);
  if (authenticated && permission === 'staff') given.push(['403', ERROR_REF]);
  for (const [status, response] of given) {
    if (status in responses) continue;
    const description = STATUS_CODES[Number(status)] ?? `Status ${status}`;
    responses[status] = isBodyless(response) ? { type: 'null', description: response.description } : { description, content: { 'application/json': { schema: serialisable(named(response)) } } };
  }
  return responses;
}

/**
 * The route schema of one method of a view, or `{ hide: true }` for a method it lacks (its route
 * only answers 405) and for the views that describe the API rather than being part of it.
 * `usedIds` keeps the operationIds distinct across the API.
 */
export function viewRouteSchema(registered: RegisteredView, method: ApiMethod, usedIds: Set<string>): FastifySchema {
  const operation = registered.view.methods[method];
  if (!operation || registered.options.documented === false) return { hide: true };
  const mode = authenticationModeOf(registered, method);
  const permission = permissionOf(registered, method);
  const schemes = mode === 'none' ? [] : mode === 'token' ? [{ tokenAuth: [] }] : [{ tokenAuth: [] }, { cookieAuth: [] }];
  // An empty requirement is OpenAPI's "or no authentication at all".
  const security = mode === 'none' ? [] : permission === 'allow_any' ? [...schemes, {}] : schemes;
  const base = operation.operationId ?? derivedOperationId(registered.url, method);
  let operationId = base;
  for (let suffix = 2; usedIds.has(operationId); suffix += 1) operationId = `${base}_${suffix}`;
  usedIds.add(operationId);
  return {
    operationId,
    summary: operation.summary,
    description: operation.description ?? operation.summary,
    tags: [registered.view.tag ?? 'api'],
    security,
    ...(operation.requestBody ? { body: named(operation.requestBody), consumes: BODY_TYPES } : {}),
    response: responsesOf(operation, permission, mode !== 'none'),
  };
}
