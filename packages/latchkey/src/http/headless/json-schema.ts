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
/** An answer: what it means, and its JSON body. */
export const json = (description: string, body: Json, extra: Json = {}): Json => ({ description, content: { 'application/json': { schema: body } }, ...extra });
/** A request body's schema, saying what it is (a named shape as it is: OpenAPI 3.0 reads nothing beside a $ref). */
export const requestBody = (description: string, body: Json): Json => (typeof body.$ref === 'string' ? body : { ...body, description });
