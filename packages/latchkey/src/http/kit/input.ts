/**
 * Input hygiene every front door applies before a value reaches a flow. Fields are read by name
 * and by type, so an extra field (is_staff, email_verified) is never looked at and a value of the
 * wrong type (an array, an object such as {"$ne": ""}, a number) never reaches a flow in a shape
 * it does not expect.
 */

/** The body as an object of fields; anything else (an array, a string, nothing) has none. */
export function bodyObject(body: unknown): Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

/**
 * Whether text holds a NUL character: no person types one, PostgreSQL refuses to store or compare
 * it, and C-based parsers further down may stop reading at it. Such text is refused, not trimmed.
 */
export function hasNul(text: string): boolean {
  return text.includes('\u0000');
}

/** A field's text, or undefined when it is absent, not a string, or holds a NUL. */
export function textField(body: unknown, name: string): string | undefined {
  const value = bodyObject(body)[name];
  return typeof value === 'string' && !hasNul(value) ? value : undefined;
}

/**
 * A JSON.parse reviver that refuses `__proto__` (or a `constructor` with a `prototype`): parsed
 * into an object, such a key is the start of a prototype-pollution attack on whatever later merges
 * the body, and no field of any door has that name. The refusal is a SyntaxError, as for any other
 * malformed JSON.
 */
export function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value)) {
    throw new SyntaxError(`The key "${key}" is not allowed`);
  }
  return value;
}

/**
 * JSON.parse with refusePrototypeKeys; throws a SyntaxError on anything malformed. A body nested
 * so deeply that the reviver runs out of stack is malformed too, said in words of our own: the
 * engine's RangeError ("Maximum call stack size exceeded") describes the server, not the request.
 */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text, refusePrototypeKeys);
  } catch (error) {
    if (error instanceof SyntaxError) throw error;
    throw new SyntaxError('The JSON is nested too deeply.');
  }
}

/** A JSON field's boolean, or undefined when it is anything else ("true" is not true). */
export function booleanField(body: unknown, name: string): boolean | undefined {
  const value = bodyObject(body)[name];
  return typeof value === 'boolean' ? value : undefined;
}

/** A JSON field's list of integers (session ids), or undefined when it is anything else or too long. */
export function integerListField(body: unknown, name: string, maxLength = 1000): number[] | undefined {
  const value = bodyObject(body)[name];
  if (!Array.isArray(value) || value.length > maxLength) return undefined;
  return value.every((item) => Number.isSafeInteger(item)) ? (value as number[]) : undefined;
}
