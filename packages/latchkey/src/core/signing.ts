import { constantTimeEqual, keyedHash } from './crypto.js';

/**
 * Signed, timestamped values, as Django's TimestampSigner: `<value>.<time>.<signature>`, where the
 * value is base64url text, the time is seconds since the epoch in base 36, and the signature is an
 * HMAC over both under a key derived from LATCHKEY_SECRET_KEY for this purpose only. Nothing is
 * stored: the signature proves the value came from us, the time bounds its life.
 */
export function signValue(secretKey: string, purpose: string, value: string, now: Date): string {
  const body = `${Buffer.from(value, 'utf8').toString('base64url')}.${Math.floor(now.getTime() / 1000).toString(36)}`;
  return `${body}.${keyedHash(secretKey, `signing:${purpose}`, body)}`;
}

const SIGNED = /^([A-Za-z0-9_-]{1,2048})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * The value of a token signed for `purpose` no more than `maxAgeSeconds` ago, or undefined for
 * anything else: a forged or altered token, one signed for another purpose, an expired one, or
 * input that is not a token at all (blank, an array, null).
 */
export function unsignValue(secretKey: string, purpose: string, token: unknown, maxAgeSeconds: number, now: Date): string | undefined {
  if (typeof token !== 'string') return undefined;
  const match = SIGNED.exec(token);
  if (!match) return undefined;
  const [, encoded, time, signature] = match as unknown as [string, string, string, string];
  if (!constantTimeEqual(signature, keyedHash(secretKey, `signing:${purpose}`, `${encoded}.${time}`))) return undefined;
  const age = Math.floor(now.getTime() / 1000) - parseInt(time, 36);
  if (age < 0 || age > maxAgeSeconds) return undefined;
  return Buffer.from(encoded, 'base64url').toString('utf8');
}
