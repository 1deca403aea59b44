/**
 * Telling "a service we depend on is away" from "a bug". When PostgreSQL restarts, the requests
 * that were using it fail with a dropped connection, and those that follow with a refused one,
 * until the pool reconnects; that is not the person's fault nor a defect, and it passes. Such a
 * failure is answered 503 (try again shortly) instead of 500, still without a word of what failed.
 *
 * Only what a connection says is recognised: network codes from Node, SQLSTATE classes from
 * PostgreSQL, and the fixed messages of node-postgres for a connection it lost or could not get.
 * Anything else stays a 500, so a real defect is never hidden behind a "try again".
 */

/** Node's codes for a connection refused, dropped or unanswered. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * PostgreSQL's SQLSTATEs for a server going away or not taking connections: class 08
 * (connection exception), 57P01-57P03 (shut down by the administrator, crashed, cannot connect
 * now: a restart) and 53300 (too many connections).
 */
function isOutageSqlState(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** node-postgres's messages for a connection lost mid-use or not obtained in time. */
const DRIVER_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /not queryable/, /^Client was closed and is not queryable/];

export function isServiceOutage(error: unknown): boolean {
  // A wrapped failure says what it wraps; a few levels are plenty, and a cycle cannot loop.
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || isOutageSqlState(code))) return true;
    if (DRIVER_MESSAGES.some((pattern) => pattern.test((current as Error).message))) return true;
    current = current.cause;
  }
  return false;
}
