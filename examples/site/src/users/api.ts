import type { FastifyRequest } from 'fastify';
import {
  expectDictionary,
  fieldErrors,
  NAME_MAX_LENGTH,
  notFound,
  readCharField,
  type ApiOperation,
  type ApiRoutes,
  type JsonSchema,
  type Latchkey,
  type User,
} from '@latchkey/core';
import { lookupOf, pathSegment } from './lookup.js';

/**
 * The project's users API (cookiecutter-django's users/api: UserViewSet and UserSerializer), in
 * Django REST framework's shapes:
 *
 *   GET /api/users/                    a list holding only the requester
 *   GET /api/users/me/                 the requester
 *   GET|PUT|PATCH /api/users/<lookup>/ the requester, by the lookup of src/users/lookup.ts; only
 *                                      `name` can be changed
 *
 * A person sees only themself: every other lookup, existing or not, is the same 404, so the API
 * never tells whether a lookup belongs to someone. Every view needs a signed-in user (token or
 * session), the API layer's default.
 */

export function registerUserApi(api: ApiRoutes, latchkey: Pick<Latchkey, 'users'>): void {
  /** UserSerializer: the identifier, the name, and the absolute URL of the user's own detail view. */
  const present = (user: User): Record<string, string> => ({
    username: user.username ?? '',
    name: user.name,
    // From SITE_URL, never from the request's Host or X-Forwarded-Host: a link the API hands out
    // must not point wherever a forged header says.
    url: api.absoluteUrl(`/api/users/${pathSegment(lookupOf(user))}/`),
  });

  /** The views require a signed-in user; the API layer does not call them without one. */
  const requester = (user: User | undefined): User => {
    if (user === undefined) throw new Error('The users API was called without a user: its views must require authentication.');
    return user;
  };

  /** The requester when the URL names them; anyone else, real or not, is indistinguishable from nobody. */
  const ownLookup = (request: FastifyRequest, user: User): boolean => {
    const { lookup } = request.params as { lookup?: string };
    return lookup !== undefined && lookup === lookupOf(user);
  };

  const userSchema: JsonSchema = {
    type: 'object',
    properties: {
      username: { type: 'string', readOnly: true, description: 'The username (read only).' },
      name: { type: 'string', maxLength: NAME_MAX_LENGTH, description: 'The display name; may be empty.' },
      url: { type: 'string', format: 'uri', readOnly: true, description: "The absolute URL of this user's detail view." },
    },
    required: ['username', 'name', 'url'],
  };
  const updateSchema: JsonSchema = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: NAME_MAX_LENGTH } },
    description: 'Only name is writable; username and url are ignored if sent.',
  };
  const fieldErrorsSchema: JsonSchema = {
    type: 'object',
    properties: {
      name: { type: 'array', items: { type: 'string' } },
      non_field_errors: { type: 'array', items: { type: 'string' } },
    },
  };
  const notFoundSchema: JsonSchema = {
    type: 'object',
    properties: { detail: { type: 'string', example: 'Not found.' } },
    description: "Not the requester's own lookup (whether or not such a user exists).",
  };

  // drf-spectacular's operationIds for the viewset, so that generated clients keep their names.
  const retrieve: ApiOperation = {
    operationId: 'users_retrieve',
    summary: 'Your own user (any other is 404)',
    responses: { 200: userSchema, 404: notFoundSchema },
    handler: (request, _reply, user) => {
      const me = requester(user);
      return ownLookup(request, me) ? Promise.resolve(present(me)) : Promise.reject(notFound());
    },
  };

  /**
   * PUT and PATCH alike, as the serializer has them: `name` is the only writable field, and an
   * optional one, so a body without it changes nothing. The other user's 404 comes before any
   * look at the body, as DRF's get_object() does, so a refusal never depends on who exists.
   */
  const update = (operationId: string, summary: string): ApiOperation => ({
    operationId,
    summary,
    requestBody: updateSchema,
    responses: { 200: userSchema, 400: fieldErrorsSchema, 404: notFoundSchema },
    handler: async (request, _reply, user) => {
      const me = requester(user);
      if (!ownLookup(request, me)) throw notFound();
      const body = expectDictionary(request.body);
      if (!body.ok) throw fieldErrors({ non_field_errors: [body.error] });
      // DRF's CharField reading (types, null, trimming); the length and what counts as text are
      // Latchkey's rule for names, which the API layer presents as a field error under `name`.
      const name = readCharField(body.value, 'name', { required: false, allowBlank: true });
      if (!name.ok) throw fieldErrors({ name: [name.error] });
      if (name.value === undefined) return present(me);
      return present(await latchkey.users.update(me, { name: name.value }));
    },
  });

  api.view('/api/users/', {
    tag: 'users',
    methods: {
      get: {
        operationId: 'users_list',
        summary: 'The users you may see: only yourself',
        responses: { 200: { type: 'array', items: userSchema } },
        handler: (_request, _reply, user) => Promise.resolve([present(requester(user))]),
      },
    },
  });

  api.view('/api/users/me/', {
    tag: 'users',
    methods: {
      get: {
        operationId: 'users_me_retrieve',
        summary: 'The signed-in user',
        responses: { 200: userSchema },
        handler: (_request, _reply, user) => Promise.resolve(present(requester(user))),
      },
    },
  });

  api.view('/api/users/:lookup/', {
    tag: 'users',
    methods: {
      get: retrieve,
      put: update('users_update', 'Update your name'),
      patch: update('users_partial_update', 'Update your name (partial update)'),
    },
  });
}
