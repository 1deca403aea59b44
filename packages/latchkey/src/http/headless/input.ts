/**
 * Reading JSON request bodies. Every field is read by name and by type, so an extra field
 * (is_staff, email_verified) is never looked at, and a value of the wrong type (an array, an
 * object such as {"$ne": ""}, a number) reads as missing instead of reaching a flow in a shape it
 * does not expect. Text with a NUL character reads as missing too (PostgreSQL refuses it).
 */
export function bodyObject(body: unknown): Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

export function stringField(body: unknown, name: string): string | undefined {
  const value = bodyObject(body)[name];
  return typeof value === 'string' && !value.includes('\u0000') ? value : undefined;
}

export function booleanField(body: unknown, name: string): boolean | undefined {
  const value = bodyObject(body)[name];
  return typeof value === 'boolean' ? value : undefined;
}

/** An array of integers (session ids), or undefined when the field is anything else. */
export function integerListField(body: unknown, name: string, maxLength = 1000): number[] | undefined {
  const value = bodyObject(body)[name];
  if (!Array.isArray(value) || value.length > maxLength) return undefined;
  return value.every((item) => Number.isSafeInteger(item)) ? (value as number[]) : undefined;
}
