/**
 * Small builders for the JSON Schema of the headless API's shapes (schemas.ts, webauthn-schemas.ts)
 * and of its routes' answers (operation-schema.ts).
 */

type Json = Record<string, unknown>;

/** A named shape (added with `addSchema`), as a route's schema refers to it. */
export const schema = (name: string): Json => ({ $ref: `${name}#` });
export const object = (properties: Json, required: string[] = Object.keys(properties), extra: Json = {}): Json => ({ type: 'object', properties, required, ...extra });
export const status = (code: number): Json => ({ type: 'integer', enum: [code], description: 'The HTTP status, repeated.' });
export const arrayOf = (items: Json, description?: string): Json => ({ type: 'array', items, ...(description === undefined ? {} : { description }) });
const SESSION_TOKEN = { type: 'string', description: 'App client: the session token to send from now on, when this request created or replaced it.' };

/**
 * An envelope (an object with `status`) as the app client may receive it: any answer carries the
 * new session token in `meta.session_token` when the request created or replaced the session
 * (respond.ts), so every envelope declares it, and the serialiser, which sends only what is
 * declared, keeps it. A `meta` that is a named shape already declares it.
 */
export function carryingSessionToken(body: Json): Json {
  const properties = body.properties as Json | undefined;
  if (body.type !== 'object' || properties?.status === undefined) return body;
  const meta = properties.meta as Json | undefined;
  if (meta !== undefined && typeof meta.$ref === 'string') return body;
  // OpenAPI 3.0 allows no empty `required` list: a meta of the token alone lists none.
  const withToken = meta === undefined ? { type: 'object', properties: { session_token: SESSION_TOKEN } } : { ...meta, properties: { ...(meta.properties as Json), session_token: SESSION_TOKEN } };
  return { ...body, properties: { ...properties, meta: withToken } };
}

/** An answer: what it means, and its JSON body. */
export const json = (description: string, body: Json, extra: Json = {}): Json => ({ description, content: { 'application/json': { schema: carryingSessionToken(body) } }, ...extra });
/** A request body's schema, saying what it is (a named shape as it is: OpenAPI 3.0 reads nothing beside a $ref). */
export const requestBody = (description: string, body: Json): Json => (typeof body.$ref === 'string' ? body : { ...body, description });
