import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { englishText, isMessage, msgid, type Message } from '../../core/i18n/message.js';

/**
 * How the project's API layer (`/api/`, a generated project's use_drf=y) declares its routes, as
 * Django REST framework views: one view per URL, its methods, and who may call it. Latchkey
 * authenticates the request (token or session), checks the permission, answers the methods the
 * view lacks with 405, and describes every view in the OpenAPI schema at /api/schema/.
 */

/** DRF's permission classes: IsAuthenticated (the default), IsAdminUser (staff), AllowAny. */
export type ApiPermission = 'authenticated' | 'staff' | 'allow_any';

/** An HTTP method a view answers, in lower case (the keys of ApiView.methods). */
export type ApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** JSON Schema (OpenAPI 3.0 flavour) of a request or response body. */
export type JsonSchema = Record<string, unknown>;

/** One method of an API view: its handler and what the OpenAPI schema says about it. */
export interface ApiOperation {
  /**
   * The authenticated user, when the permission requires one (else possibly undefined). Return
   * the body to send it as JSON (status 200 unless `reply.code()` set another), return nothing
   * for 204 No Content, or send it yourself and return `reply`. Throw an `ApiError` (or use
   * `notFound()`, `fieldErrors()`) for a refusal in DRF's shapes.
   */
  handler: (request: FastifyRequest, reply: FastifyReply, user: User | undefined) => Promise<unknown>;
  /** For the OpenAPI schema: a one-line summary, the request body, and the body of each status. */
  summary: string;
  requestBody?: JsonSchema;
  /**
   * A status's body schema, or `{ description }` alone for a status without a body (204). 401
   * and 403 are added from the view's permission when not given.
   */
  responses: Record<number, JsonSchema | { description: string }>;
  /** A longer description for the docs; the summary when absent. */
  description?: string;
  /** The schema's operationId; derived from the path and method when absent (`users_me_retrieve`). */
  operationId?: string;
}

/** An API view of the project's (/api/...): the URL's methods, who may call it, and its tag in the schema. */
export interface ApiView {
  /** Who may call the view: 'authenticated' unless said. */
  permission?: ApiPermission;
  /** OpenAPI tag grouping the view's operations (e.g. 'users'). */
  tag?: string;
  methods: Partial<Record<ApiMethod, ApiOperation>>;
}

/** What the project's `api.routes` function is given. */
export interface ApiRoutes {
  /** Registers one view at `url` (Fastify path syntax, under /api/, e.g. '/api/users/:id/'). */
  view(url: string, view: ApiView): void;
  /**
   * The site's absolute URL for a path of the API as `view()` names it (SITE_URL, URL_PREFIX, then
   * the path: `/api/users/ada/`), for `url` fields as DRF's hyperlinks give them.
   */
  absoluteUrl(path: string): string;
}

/** What `latchkey.plugin`'s `api` option takes: turning the API layer on, with the project's views. */
export interface ApiOptions {
  routes?: (api: ApiRoutes) => void | Promise<void>;
}

/**
 * A refusal a view throws, answered as `status` with `body` (DRF's shapes: `{"detail": ...}` or
 * field errors `{"name": ["..."]}`). Never logged as a server error. Each message of the body, a
 * string or a list of them under a key, is sent in the request's language: a `msg()` message, or a
 * string the catalogs know as a message id (DRF's own messages); any other text goes out as written.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.detail === 'string' ? body.detail : isMessage(body.detail) ? englishText(body.detail) : `API error ${status}`);
    this.name = 'ApiError';
  }
}

/** DRF's NotFound (404 `{"detail": "Not found."}`): also for another user's object, so none is revealed. */
export function notFound(): ApiError {
  return new ApiError(404, { detail: msgid('Not found.') });
}

/** DRF's ValidationError (400): the messages under each field's name, `non_field_errors` for the whole input. */
export function fieldErrors(errors: Record<string, readonly (Message | string)[]>): ApiError {
  return new ApiError(400, errors);
}
