import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from './crypto.js';

/**
 * Secrets that must be read back (a TOTP secret, the seed of the recovery codes, an API token's
 * copy, a session's data) are stored encrypted with AES-256-GCM under a key derived from
 * LATCHKEY_SECRET_KEY for that purpose alone, so a database dump without the key yields none of them.
 *
 * The associated data binds a ciphertext to where it belongs (say, "user 42's TOTP secret"):
 * someone able to write to the database cannot move another user's encrypted secret onto their
 * own row and have it decrypt there. Format: `v1.<base64url(iv | ciphertext | tag)>`.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function encryptSecret(secretKey: string, purpose: string, plaintext: Uint8Array, associatedData: string): string {
  return encryptUnderKey(deriveKey(secretKey, `encryption:${purpose}`), plaintext, associatedData);
}

/**
 * The plaintext, or undefined when the value was not made by encryptSecret under this key,
 * purpose and associated data: altered, moved to another row, or encrypted under a secret key
 * that has since been changed.
 */
export function decryptSecret(secretKey: string, purpose: string, encrypted: unknown, associatedData: string): Uint8Array | undefined {
  return decryptUnderKey(deriveKey(secretKey, `encryption:${purpose}`), encrypted, associatedData);
}

/**
 * encryptSecret under a 32-byte key the caller derived itself: for a key that depends on more
 * than the secret key (a session's data is sealed under a key made from the session's own id,
 * which the database never holds).
 */
export function encryptUnderKey(key: Uint8Array, plaintext: Uint8Array, associatedData: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url')}`;
}

/** decryptSecret under a key the caller derived itself (encryptUnderKey). */
export function decryptUnderKey(key: Uint8Array, encrypted: unknown, associatedData: string): Uint8Array | undefined {
  if (typeof encrypted !== 'string' || !encrypted.startsWith(`${VERSION}.`)) return undefined;
  const raw = Buffer.from(encrypted.slice(VERSION.length + 1), 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return new Uint8Array(Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]));
  } catch {
    return undefined;
  }
}

/** A JSON value sealed as encryptSecret seals bytes. */
export function sealJson(secretKey: string, purpose: string, value: unknown, associatedData: string): string {
  return encryptSecret(secretKey, purpose, new TextEncoder().encode(JSON.stringify(value)), associatedData);
}

/** The JSON value sealJson sealed, or undefined when it does not open (decryptSecret). */
export function openJson(secretKey: string, purpose: string, sealed: unknown, associatedData: string): unknown {
  const plaintext = decryptSecret(secretKey, purpose, sealed, associatedData);
  return plaintext === undefined ? undefined : (JSON.parse(new TextDecoder().decode(plaintext)) as unknown);
}
