import { constantTimeEqual } from '../core/crypto.js';
// Django's order of the 62 characters matters: the mask shifts each character by an index in it.
import { ALPHANUMERIC as ALPHABET, randomAlphanumeric } from '../core/random.js';

/**
 * CSRF tokens in Django's format, so that Django's habits and JavaScript clients carry over: the
 * cookie `csrftoken` holds a 32-character secret; forms and the X-CSRFToken header carry either
 * the secret itself or a 64-character masked copy (a random one-time pad, then the secret shifted
 * by it). Masking makes every rendered token different, which defeats compression-based attacks
 * (BREACH) that would otherwise recover a constant secret from HTTPS responses.
 */
export const CSRF_SECRET_LENGTH = 32;
const SECRET = /^[a-zA-Z0-9]{32}$/;
const MASKED = /^[a-zA-Z0-9]{64}$/;

export function newCsrfSecret(): string {
  return randomAlphanumeric(CSRF_SECRET_LENGTH);
}

export function isCsrfSecret(value: unknown): value is string {
  return typeof value === 'string' && SECRET.test(value);
}

export function maskCsrfSecret(secret: string): string {
  const mask = randomAlphanumeric(CSRF_SECRET_LENGTH);
  let cipher = '';
  for (let i = 0; i < CSRF_SECRET_LENGTH; i++) {
    cipher += ALPHABET[(ALPHABET.indexOf(secret[i]!) + ALPHABET.indexOf(mask[i]!)) % ALPHABET.length];
  }
  return mask + cipher;
}

function unmask(token: string): string {
  const mask = token.slice(0, CSRF_SECRET_LENGTH);
  const cipher = token.slice(CSRF_SECRET_LENGTH);
  let secret = '';
  for (let i = 0; i < CSRF_SECRET_LENGTH; i++) {
    const index = (ALPHABET.indexOf(cipher[i]!) - ALPHABET.indexOf(mask[i]!) + ALPHABET.length) % ALPHABET.length;
    secret += ALPHABET[index];
  }
  return secret;
}

/** Whether a submitted token (masked or not) matches the cookie's secret; constant time. */
export function csrfTokenMatches(secret: string, token: unknown): boolean {
  if (!isCsrfSecret(secret) || typeof token !== 'string') return false;
  if (MASKED.test(token)) return constantTimeEqual(unmask(token), secret);
  if (SECRET.test(token)) return constantTimeEqual(token, secret);
  return false;
}
