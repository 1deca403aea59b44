import type { FastifyRequest } from 'fastify';
import {
  expectDictionary,
  fieldErrors,
  isLatchkeyError,
  NAME_MAX_LENGTH,
  notFound,
  readCharField,
  refusalsOf,
  type ApiOperation,
  type ApiRoutes,
  type JsonSchema,
  type Latchkey,
  type User,
  type UserUpdate,
} from '@latchkey/core';
import { lookupOf, pathSegment } from './lookup.js';

/**
 * The project's users API (cookiecutter-django's users/api: UserViewSet and UserSerializer), in
 * Django REST framework's shapes:
 *
 *   GET /api/users/                    a list holding only the requester
 *   GET /api/users/me/                 the requester
 *   GET|PUT|PATCH /api/users/<lookup>/ the requester, by the lookup of src/users/lookup.ts; `name`
 *                                      and the editable fields of src/users/fields.ts can be changed
 *
 * The project's own fields declared `api: true` (src/users/fields.ts) are part of the user, as the
 * fields a project adds to cookiecutter-django's UserSerializer; those not `editable` are read
 * only (ignored if sent, as DRF ignores a read-only field). The views' declarations below include
 * them, so that they are checked, written and documented like the others
 * (node_modules/@latchkey/core/docs/user-fields.md).
 *
 * A person sees only themself: every other lookup, existing or not, is the same 404, so the API
 * never tells whether a lookup belongs to someone. Every view needs a signed-in user (token or
 * session), the API layer's default.
 */

export function registerUserApi(api: ApiRoutes, latchkey: Pick<Latchkey, 'users' | 'userFields' | 'translator'>): void {
  const { userFields } = latchkey;
  /** The project's fields in the API, and those of them a user may change. */
  const shown = userFields.inApi;
  const writable = shown.filter((field) => field.editable);

  /** UserSerializer: the identifier, the name, the absolute URL of the user's own detail view, and the project's fields. */
  const present = (user: User): Record<string, unknown> => ({
%% if username %%
    username: user.username ?? '',
%% else %%
    email: user.email,
%% endif %%
    name: user.name,
    // From SITE_URL, never from the request's Host or X-Forwarded-Host: a link the API hands out
    // must not point wherever a forged header says.
    url: api.absoluteUrl(`/api/users/${pathSegment(lookupOf(user))}/`),
    ...userFields.valuesOf(shown, user),
  });

  /**
   * The writable fields a body sends, as sent, for latchkey.users.update to judge. A field not sent
   * is left as it is; but a full update (PUT) must give each one declared `required`, as DRF's
   * serializer requires it: one left out is judged as empty, and refused beside every other.
   */
  const sentFields = (body: Record<string, unknown>, full: boolean): UserUpdate =>
    Object.fromEntries(
      writable.flatMap((field): [string, unknown][] => {
        if (body[field.name] !== undefined) return [[field.name, body[field.name]]];
        return full && field.required ? [[field.name, null]] : [];
      }),
    );

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
%% if username %%
      username: { type: 'string', readOnly: true, description: 'The username (read only).' },
%% else %%
      email: { type: 'string', format: 'email', readOnly: true, description: 'The primary email address (read only).' },
%% endif %%
      name: { type: 'string', maxLength: NAME_MAX_LENGTH, description: 'The display name; may be empty.' },
      url: { type: 'string', format: 'uri', readOnly: true, description: "The absolute URL of this user's detail view." },
      ...Object.fromEntries(shown.map((field) => [field.name, field.editable ? userFields.jsonSchema(field) : { ...userFields.jsonSchema(field), readOnly: true }])),
    },
    // Every field is always sent: a project field holds its empty value ('', null, false) when none was given.
    required: ['%%username_type%%', 'name', 'url', ...shown.map((field) => field.name)],
  };
  const writableNames = ['name', ...writable.map((field) => field.name)];
  const updateSchema: JsonSchema = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: NAME_MAX_LENGTH }, ...Object.fromEntries(writable.map((field) => [field.name, userFields.jsonSchema(field)])) },
    description: `Writable: ${writableNames.join(', ')}; %%username_type%%, url and any other field are ignored if sent.`,
  };
  const fieldErrorsSchema: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries([...writableNames, 'non_field_errors'].map((name) => [name, { type: 'array', items: { type: 'string' } }])),
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
   * PUT and PATCH, as the serializer has them: `name` is optional, so a body without it leaves it
   * as it is; a project field too, but for a PUT of one declared `required` (sentFields). The
   * other user's 404 comes before any look at the body, as DRF's get_object() does, so a refusal
   * never depends on who exists. Every refusal comes at once, and then nothing is saved.
   */
  const update = (operationId: string, summary: string, full: boolean): ApiOperation => ({
    operationId,
    summary,
    requestBody: updateSchema,
    responses: { 200: userSchema, 400: fieldErrorsSchema, 404: notFoundSchema },
    handler: async (request, _reply, user) => {
      const me = requester(user);
      if (!ownLookup(request, me)) throw notFound();
      const body = expectDictionary(request.body);
      if (!body.ok) throw fieldErrors({ non_field_errors: [body.error] });
      const changes = sentFields(body.value, full);
      // DRF's CharField reading (types, null, trimming); the length and what counts as text are
      // Latchkey's rule for names, which the API layer presents as a field error under `name`.
      const name = readCharField(body.value, 'name', { required: false, allowBlank: true });
      const raw = body.value.name;
      if (name.ok && name.value !== undefined) changes.name = name.value;
      // A name DRF's reading refuses (a NUL, half a surrogate pair) is one Latchkey's rule for
      // names refuses too: given with the fields, it is judged beside them, so that the answer
      // lists every refusal, in DRF's words for the name, and nothing is saved.
      else if (!name.ok && typeof raw === 'string') changes.name = raw;
      else if (!name.ok) throw fieldErrors({ name: [name.error] });
      if (Object.keys(changes).length === 0) return present(me);
      try {
        return present(await latchkey.users.update(me, changes));
      } catch (error) {
        // Latchkey's refusals become DRF's field errors in the API layer, in the request's language;
        // only DRF's own message for the name is put in here, and so the others are worded here too.
        if (name.ok || !isLatchkeyError(error, 'invalid_input')) throw error;
        const translator = await latchkey.translator(request);
        const errors: Record<string, string[]> = { name: [translator.translate(name.error)] };
        for (const refusal of refusalsOf(error)) if (refusal.param !== 'name') (errors[refusal.param ?? 'non_field_errors'] ??= []).push(translator.translate(refusal.text));
        throw fieldErrors(errors);
      }
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
      put: update('users_update', 'Update your information', true),
      patch: update('users_partial_update', 'Update your information (partial update)', false),
    },
  });
}
