import { createHash, createHmac, createSecretKey, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

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

/** A derived key, as bytes and as the KeyObject HMACs take without copying it each time. */
interface DerivedKey {
  bytes: Uint8Array;
  keyObject: KeyObject;
}

function derived(secretKey: string, purpose: string, length: number): DerivedKey {
  // Derived once per key and purpose: HKDF costs more than the HMAC it keys (every API token
  // lookup runs one), and the answer never changes.
  const id = `${length}\u0000${purpose}\u0000${secretKey}`;
  let key = derivedKeys.get(id);
  if (key === undefined) {
    const bytes = new Uint8Array(hkdfSync('sha256', Buffer.from(secretKey, 'utf8'), Buffer.alloc(0), `latchkey:${purpose}`, length));
    key = { bytes, keyObject: createSecretKey(bytes) };
    // A handful of purposes per secret key; the bound only matters to a process (a test run)
    // that goes through many secret keys.
    if (derivedKeys.size >= DERIVED_KEYS_KEPT) derivedKeys.delete(derivedKeys.keys().next().value!);
    derivedKeys.set(id, key);
  }
  return key;
}

const DERIVED_KEYS_KEPT = 256;
const derivedKeys = new Map<string, DerivedKey>();

/**
 * Derives an independent key for one purpose from LATCHKEY_SECRET_KEY (HKDF-SHA256, RFC 5869), so
 * that a value signed for one purpose (an email confirmation) can never pass as another (a reset).
 * Callers must not modify the array: it is kept for the next caller.
 */
export function deriveKey(secretKey: string, purpose: string, length = 32): Uint8Array {
  return derived(secretKey, purpose, length).bytes;
}

/** HMAC-SHA256 of `value` under a key derived for `purpose`, base64url-encoded. */
export function keyedHash(secretKey: string, purpose: string, value: string): string {
  return createHmac('sha256', derived(secretKey, purpose, 32).keyObject).update(value, 'utf8').digest('base64url');
}

/** HMAC-SHA256 of `value` under a key derived for `purpose`, as 32 bytes: a key of its own for that value. */
export function keyedDigest(secretKey: string, purpose: string, value: string): Uint8Array {
  return new Uint8Array(createHmac('sha256', derived(secretKey, purpose, 32).keyObject).update(value, 'utf8').digest());
}
