/**
 * What a session keeps between requests (a login waiting at a stage, a password-reset key, the
 * state of a provider sign-in, a mailed code's hash, how the user proved who they are) is stored
 * sealed: AES-256-GCM under a key made from LATCHKEY_SECRET_KEY and the session's own id. The
 * database holds only the id's hash, so a copy of it (a backup, a replica, a dump) opens none of
 * it, not even together with the secret key; only a request that carries the id can. A value
 * moved onto another session's row does not open there either.
 *
 * A column that does not open (an empty one, one written before sessions were sealed, one sealed
 * under a secret key since changed) is a session with no data: nothing from it is trusted.
 */
import { keyedDigest } from '../core/crypto.js';
import { decryptUnderKey, encryptUnderKey } from '../core/encryption.js';

const PURPOSE = 'session-data';
const ASSOCIATED_DATA = 'latchkey session data';

function keyFor(secretKey: string, sessionId: string): Uint8Array {
  return keyedDigest(secretKey, PURPOSE, sessionId);
}

/** The session's data as stored: '' for none (there is nothing to hide), sealed otherwise. */
export function sealSessionData(secretKey: string, sessionId: string, data: Record<string, unknown>): string {
  if (Object.keys(data).length === 0) return '';
  return encryptUnderKey(keyFor(secretKey, sessionId), new TextEncoder().encode(JSON.stringify(data)), ASSOCIATED_DATA);
}

/** The data a session's column holds, or none when it does not open under this id and key. */
export function openSessionData(secretKey: string, sessionId: string, sealed: string): Record<string, unknown> {
  if (sealed === '') return {};
  const plaintext = decryptUnderKey(keyFor(secretKey, sessionId), sealed, ASSOCIATED_DATA);
  if (plaintext === undefined) return {};
  const data: unknown = JSON.parse(new TextDecoder().decode(plaintext));
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
}
