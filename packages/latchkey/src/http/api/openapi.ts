import { STATUS_CODES } from 'node:http';
import type { Settings } from '../../config/settings.js';
import { API_METHODS, authenticationModeOf, permissionOf, type RegisteredView } from './view-runner.js';
import type { ApiMethod, ApiOperation, JsonSchema } from './views.js';

type Json = Record<string, unknown>;

/** drf-spectacular's names for the methods, used in derived operationIds (`users_me_retrieve`). */
const ACTIONS: Record<ApiMethod, string> = { get: 'retrieve', post: 'create', put: 'update', patch: 'partial_update', delete: 'destroy' };
const BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded'];
const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** Fastify's `:id` path parameters in OpenAPI's `{id}` notation, and their names. */
function openApiPath(url: string): { path: string; parameters: string[] } {
  const parameters: string[] = [];
  const path = url.replace(/:([A-Za-z_][A-Za-z0-9_]*)(?:\([^)]*\))?/g, (_match, name: string) => {
    parameters.push(name);
    return `{${name}}`;
  });
  return { path, parameters };
}

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

function responsesOf(operation: ApiOperation, permission: string, authenticated: boolean): Json {
  const responses: Json = {};
  const given = Object.entries(operation.responses);
  // Refusals every protected operation can give, unless the view describes them itself.
  if (authenticated && permission !== 'allow_any') given.push(['401', ERROR_REF]);
  if (authenticated && permission === 'staff') given.push(['403', ERROR_REF]);
  for (const [status, response] of given) {
    if (status in responses) continue;
    const description = STATUS_CODES[Number(status)] ?? `Status ${status}`;
    responses[status] = isBodyless(response) ? { description: response.description } : { description, content: { 'application/json': { schema: response } } };
  }
  return responses;
}

function operationOf(registered: RegisteredView, method: ApiMethod, operation: ApiOperation, parameters: string[], usedIds: Set<string>): Json {
  const mode = authenticationModeOf(registered, method);
  const permission = permissionOf(registered, method);
  const schemes = mode === 'none' ? [] : mode === 'token' ? [{ tokenAuth: [] }] : [{ tokenAuth: [] }, { cookieAuth: [] }];
  // An empty requirement is OpenAPI's "or no authentication at all".
  const security = mode === 'none' ? [] : permission === 'allow_any' ? [...schemes, {}] : schemes;
  let operationId = operation.operationId ?? derivedOperationId(registered.url, method);
  for (let suffix = 2; usedIds.has(operationId); suffix += 1) operationId = `${operation.operationId ?? derivedOperationId(registered.url, method)}_${suffix}`;
  usedIds.add(operationId);
  return {
    operationId,
    summary: operation.summary,
    description: operation.description ?? operation.summary,
    tags: [registered.view.tag ?? 'api'],
    security,
    ...(parameters.length > 0 ? { parameters: parameters.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })) } : {}),
    // A PATCH changes what it is given: its body (every field optional) may be left out.
    ...(operation.requestBody ? { requestBody: { required: method !== 'patch', content: Object.fromEntries(BODY_TYPES.map((type) => [type, { schema: operation.requestBody }])) } } : {}),
    responses: responsesOf(operation, permission, mode !== 'none'),
  };
}

/**
 * The OpenAPI 3.0.3 document of the API layer, generated from the views' own declarations (the
 * project's and Latchkey's), with DRF's two security schemes as drf-spectacular names them.
 */
export function apiOpenApiDocument(settings: Settings, views: readonly RegisteredView[]): Json {
  const paths: Record<string, Json> = {};
  const usedIds = new Set<string>();
  for (const registered of views) {
    const { path, parameters } = openApiPath(registered.url);
    const item: Json = (paths[path] ??= {});
    for (const method of API_METHODS) {
      const operation = registered.view.methods[method];
      if (operation) item[method] = operationOf(registered, method, operation, parameters, usedIds);
    }
  }
  return {
    openapi: '3.0.3',
    info: { title: `${settings.SITE_NAME} API`, version: '1.0.0', description: `The API of ${settings.SITE_NAME}.` },
    // Under URL_PREFIX the paths below are relative to it.
    ...(settings.URL_PREFIX === '' ? {} : { servers: [{ url: settings.URL_PREFIX }] }),
    paths,
    components: {
      schemas: {
        Error: { type: 'object', required: ['detail'], properties: { detail: { type: 'string' } } },
        ValidationError: {
          type: 'object',
          description: 'The messages for each field by its name, and for the input as a whole under non_field_errors.',
          additionalProperties: { type: 'array', items: { type: 'string' } },
        },
      },
      securitySchemes: {
        tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token-based authentication with required prefix "Token"' },
        cookieAuth: { type: 'apiKey', in: 'cookie', name: settings.SESSION_COOKIE_NAME },
      },
    },
  };
}
