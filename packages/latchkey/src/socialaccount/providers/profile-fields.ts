/**
 * Reading a provider's profile JSON: the rules every provider's mapping follows, so that none of
 * them reads a claim more loosely than another.
 */

/**
 * Only `true` or the string "true" vouch for an address (Cognito's and Apple's userinfo send
 * strings); never 1, "yes" or "TRUE", and never the string "false", which a truthiness test would
 * take as true.
 */
export function isVouchedFor(value: unknown): boolean {
  return value === true || value === 'true';
}

/** A profile field's text, trimmed; undefined when it is not a string or is blank. */
export function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
