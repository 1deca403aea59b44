import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { User } from '../../account/model.js';
import { msg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { authenticateApiRequest, type ApiAuthentication, type ApiAuthenticationMode } from './authentication.js';
import { UnparsedBody } from './body.js';
import { NOT_AUTHENTICATED, PERMISSION_DENIED, sendDetail, sendNotAuthenticated, sendDrfRefusal, sendRefusalBody } from './respond.js';
import { inputProblemsOf } from '../kit/declared-input.js';
import { drfInputErrors } from './input-problems.js';
import type { ApiMethod, ApiOperation, ApiPermission, ApiView } from './views.js';

export const API_METHODS: readonly ApiMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Latchkey's own views differ from a project's in how they authenticate and refuse anonymous callers. */
export interface ViewOptions {
  /** Per method, as DRF's get_authenticators(): 'token_and_session' where not said. */
  authentication?: Partial<Record<ApiMethod, ApiAuthenticationMode>>;
  /** Per method, overriding the view's permission, as DRF's get_permissions(). */
  permissions?: Partial<Record<ApiMethod, ApiPermission>>;
  /**
   * The status for an anonymous caller refused by the permission: 401 (DRF's, with a token
   * challenge), or 403 for the schema and docs, as cookiecutter-django answers them.
   */
  anonymousStatus?: 401 | 403;
  /** false for the views that describe the API (/api/schema/): they are not in the document they serve. */
  documented?: false;
}

export interface RegisteredView {
  url: string;
  view: ApiView;
  options: ViewOptions;
}

/** DRF's Allow header: the view's methods in DRF's order, HEAD with GET, and OPTIONS always. */
export function authenticationModeOf(registered: RegisteredView, method: ApiMethod): ApiAuthenticationMode {
  return registered.options.authentication?.[method] ?? 'token_and_session';
}

export function permissionOf(registered: RegisteredView, method: ApiMethod): ApiPermission {
  return registered.options.permissions?.[method] ?? registered.view.permission ?? 'authenticated';
}

export function allowedMethods(view: ApiView): string {
  const methods = API_METHODS.filter((method) => view.methods[method] !== undefined).map((method) => method.toUpperCase());
  if (view.methods.get) methods.push('HEAD');
  methods.push('OPTIONS');
  return methods.join(', ');
}

function permissionRefusal(permission: ApiPermission, user: User | undefined): 'anonymous' | 'forbidden' | undefined {
  if (permission === 'allow_any') return undefined;
  if (!user) return 'anonymous';
  if (permission === 'staff' && !user.isStaff) return 'forbidden';
  return undefined;
}

function userOf(authentication: Exclude<ApiAuthentication, { kind: 'refused' }>): User | undefined {
  return authentication.kind === 'anonymous' ? undefined : authentication.user;
}

/**
 * One request to a view, in the order of DRF's APIView.dispatch: authentication (a bad token is
 * 401 even on a view anyone may call), the permission, then the method (405 for one the view
 * lacks), then the body (400 or 415 only now, so that an anonymous client learns nothing from
 * what it sent: first what the view's schema declares, kit/declared-input.ts), then the view's handler.
 */
async function runView(
  ctx: HttpContext,
  registered: RegisteredView & { allow: string },
  method: ApiMethod,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { view, options } = registered;
  const operation: ApiOperation | undefined = view.methods[method];
  reply.header('allow', registered.allow);
  const authentication = await authenticateApiRequest(ctx, request, authenticationModeOf(registered, method));
  if (authentication.kind === 'refused') {
    return authentication.status === 401 ? sendNotAuthenticated(reply, authentication.detail) : sendDetail(reply, authentication.status, authentication.detail);
  }
  const user = userOf(authentication);
  const refusal = permissionRefusal(permissionOf(registered, method), user);
  if (refusal === 'anonymous') return (options.anonymousStatus ?? 401) === 401 ? sendNotAuthenticated(reply) : sendDetail(reply, 403, NOT_AUTHENTICATED);
  if (refusal === 'forbidden') return sendDetail(reply, 403, PERMISSION_DENIED);
  if (!operation) return sendDetail(reply, 405, msg('Method "{method}" not allowed.', { method: request.method }));
  if (request.body instanceof UnparsedBody) return sendDetail(reply, request.body.status, request.body.detail);
  const problems = inputProblemsOf(request);
  const inputErrors = problems && drfInputErrors(request.body, problems);
  if (inputErrors) return sendRefusalBody(reply, 400, inputErrors);
  let result: unknown;
  try {
    result = await operation.handler(request, reply, user);
  } catch (error) {
    return sendDrfRefusal(reply, error);
  }
  if (result === reply) return reply;
  if (result === undefined) return reply.sent ? reply : reply.code(204).send();
  // Fastify sends a string as it is; as a JSON body it must be quoted like any other value.
  return reply.type('application/json; charset=utf-8').send(typeof result === 'string' ? JSON.stringify(result) : result);
}

/** Why a view cannot be registered at `url`, or undefined when it can. */
export function viewDefinitionProblem(url: string, view: ApiView): string | undefined {
  if (!url.startsWith('/api/')) return `API views live under /api/: "${url}" does not.`;
  if (API_METHODS.every((method) => view.methods[method] === undefined)) return `The API view at "${url}" has no methods.`;
  return undefined;
}

/**
 * Registers a view at `url` (a path under /api/) in the API scope, whose prefix is /api: each of
 * its methods, and a 405 for every method it lacks, so that a known path never answers 404.
 * (Fastify answers HEAD with the GET route, so HEAD is 405 too where GET is.)
 */
export function registerView(api: FastifyInstance, ctx: HttpContext, registered: RegisteredView, schemaOf: (method: ApiMethod) => FastifySchema): void {
  const { url } = registered;
  const prepared = { ...registered, allow: allowedMethods(registered.view) };
  const path = url.slice('/api'.length);
  for (const method of API_METHODS) {
    api.route({
      method: method.toUpperCase(),
      url: path,
      // What the view declares, for the OpenAPI document (route-schema.ts).
      schema: schemaOf(method),
      // The view runner checks CSRF itself, and only for session-authenticated requests.
      config: { csrf: false },
      handler: (request, reply) => runView(ctx, prepared, method, request, reply),
    });
  }
}
