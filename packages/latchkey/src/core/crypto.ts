import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random string of `bytes` bytes from the CSPRNG, base64url-encoded (no padding). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Compares two strings in time that depends only on their lengths, never on where they first
 * differ. Both sides are hashed first so that even the length comparison leaks nothing useful.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** SHA-256 of a high-entropy secret (session ids, tokens), hex-encoded, for storage and lookup. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
