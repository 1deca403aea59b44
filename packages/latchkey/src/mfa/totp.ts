import { randomBytes } from 'node:crypto';
import { HOTP, Secret, TOTP } from 'otpauth';
import { constantTimeEqual } from '../core/crypto.js';

/**
 * Time-based one-time passwords (RFC 6238) as every authenticator app computes them, with
 * allauth's parameters: HMAC-SHA1, a 30-second step, 6 digits and a 20-byte secret. The digits
 * and the step come from the settings (MFA_TOTP_DIGITS, MFA_TOTP_PERIOD); apps read both from the
 * otpauth:// URI. otpauth computes the HOTP values (RFC 4226); the matching below is ours, so that
 * it can say which time step matched (the replay guard needs it) and compare in constant time.
 */
export interface TotpParameters {
  /** Seconds per time step (RFC 6238's X). */
  period: number;
  digits: number;
  /** How many steps before and after the current one are also accepted (clock drift). */
  tolerance: number;
  /** RFC 6238 allows SHA-256 and SHA-512 too; apps widely support only SHA-1, so that is the default. */
  algorithm?: 'SHA1' | 'SHA256' | 'SHA512';
}

export const TOTP_SECRET_BYTES = 20;

export function newTotpSecret(): Uint8Array {
  return new Uint8Array(randomBytes(TOTP_SECRET_BYTES));
}

/** The secret as apps take it when typed in by hand: RFC 4648 base32 without padding. */
export function totpSecretToBase32(secret: Uint8Array): string {
  return new Secret({ buffer: toArrayBuffer(secret) }).base32;
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * The secret of RFC 4648 base32 text (as allauth stores a TOTP secret: `base64.b32encode` of 20
 * random bytes), or undefined when it is empty or not base32. Letters may be of either case and
 * the `=` padding may be left out, but its length must be one that a whole number of bytes gives
 * (as Python's b32decode requires): anything else is damaged text, better refused than read as a
 * secret that no authenticator app holds. Like b32decode, the unused bits of the last character
 * are ignored.
 */
export function totpSecretFromBase32(text: string): Uint8Array | undefined {
  const unpadded = text.toUpperCase().replace(/=+$/, '');
  if (unpadded === '' || !/^[A-Z2-7]+$/.test(unpadded)) return undefined;
  // A base32 group of 8 characters holds 5 bytes; a shorter last group has 2, 4, 5 or 7 characters.
  if (![0, 2, 4, 5, 7].includes(unpadded.length % 8)) return undefined;
  if (text.length !== unpadded.length && (text.length % 8 !== 0 || text.length - unpadded.length > 6)) return undefined;
  const bytes = new Uint8Array(Math.floor((unpadded.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let written = 0;
  for (const character of unpadded) {
    buffer = ((buffer << 5) | BASE32_ALPHABET.indexOf(character)) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes[written] = (buffer >> bits) & 0xff;
      written += 1;
    }
  }
  return bytes;
}

/** The time step containing `now` (RFC 6238 section 4.2: T = floor((now - T0) / X), T0 = 0). */
export function totpCounter(now: Date, period: number): number {
  return Math.floor(now.getTime() / 1000 / period);
}

/** The code for one time step. */
export function totpCodeForCounter(secret: Uint8Array, counter: number, parameters: Pick<TotpParameters, 'digits' | 'algorithm'>): string {
  return HOTP.generate({
    secret: new Secret({ buffer: toArrayBuffer(secret) }),
    algorithm: parameters.algorithm ?? 'SHA1',
    digits: parameters.digits,
    counter,
  });
}

/** The code an app shows at `now`. */
export function totpCode(secret: Uint8Array, now: Date, parameters: TotpParameters): string {
  return totpCodeForCounter(secret, totpCounter(now, parameters.period), parameters);
}

/**
 * The time step whose code `code` is, among the current step and `tolerance` steps either side,
 * or undefined. Every step in the window is compared, in constant time, whether or not an earlier
 * one matched, so the time taken says nothing about how close a guess came.
 */
export function matchTotpCode(secret: Uint8Array, code: string, now: Date, parameters: TotpParameters): number | undefined {
  if (!new RegExp(`^\\d{${parameters.digits}}$`).test(code)) return undefined;
  const current = totpCounter(now, parameters.period);
  let matched: number | undefined;
  for (let counter = current - parameters.tolerance; counter <= current + parameters.tolerance; counter += 1) {
    if (constantTimeEqual(totpCodeForCounter(secret, counter, parameters), code) && matched === undefined) matched = counter;
  }
  return matched;
}

/**
 * The otpauth:// URI (Google Authenticator's Key Uri Format) that the QR code carries: the issuer
 * (the site's name) and label (the user's login) are what the app lists the account under.
 */
export function totpUri(input: { secret: Uint8Array; issuer: string; label: string; parameters: TotpParameters }): string {
  return new TOTP({
    issuer: input.issuer,
    label: input.label,
    secret: new Secret({ buffer: toArrayBuffer(input.secret) }),
    algorithm: input.parameters.algorithm ?? 'SHA1',
    digits: input.parameters.digits,
    period: input.parameters.period,
  }).toString();
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
