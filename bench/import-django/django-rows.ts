/**
 * The rows the benchmark's Django database holds (django-database.ts inserts them): users
 * `user<n>` (username_type 'username'), `user<n>@example.com`, a name from 20 first names and 50
 * family names, one Django pbkdf2_sha256 hash for all (the import copies hashes, it never computes
 * one), one in 50 inactive, one in 10,000 staff, user 1 a superuser, joined a minute apart, two in
 * three with a last login; one email address each (primary; verified but one in 20); a DRF token
 * (40 random hex digits, as DRF makes them) for every tenth user; a TOTP authenticator (a random
 * base32 secret) and a set of recovery codes (allauth's 80-hex seed, a used_mask) for every
 * hundredth, in allauth 65's data layout.
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';

export const TOKEN_EVERY = 10;
export const MFA_EVERY = 100;

export const FIRST_JOINED = Date.UTC(2018, 0, 1);
export const FIRST_LOGIN = Date.UTC(2024, 0, 1);
const MFA_CREATED = Date.UTC(2024, 5, 1);


/** How many rows of each kind a Django database of `users` users holds. */
export function population(users: number): Record<'users' | 'emailAddresses' | 'tokens' | 'authenticators', number> {
  return { users, emailAddresses: users, tokens: Math.floor(users / TOKEN_EVERY), authenticators: 2 * Math.floor(users / MFA_EVERY) };
}

/** A pbkdf2_sha256 hash as Django 3.2 writes it (260,000 iterations), shared by every user. */
export function djangoPasswordHash(): string {
  const salt = randomBytes(16).toString('base64url').replace(/[-_]/g, 'x').slice(0, 22);
  return `pbkdf2_sha256$260000$${salt}$${pbkdf2Sync('a password nobody types', salt, 260_000, 32, 'sha256').toString('base64')}`;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** allauth's TOTP secret: 20 random bytes in base32 (32 characters). */
function totpSecret(): string {
  const bytes = randomBytes(20);
  let text = '';
  for (let bit = 0; bit < 160; bit += 5) {
    const byte = bit >> 3;
    const word = (bytes[byte]! << 8) | (bytes[byte + 1] ?? 0);
    text += BASE32[(word >> (11 - (bit & 7))) & 31];
  }
  return text;
}

export interface Authenticator {
  id: number;
  userId: number;
  type: 'totp' | 'recovery_codes';
  /** As Python's json.dumps writes it. */
  data: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** The k-th MFA user's two authenticators (k from 1): TOTP, then recovery codes with some used. */
export function authenticatorsOf(k: number): [Authenticator, Authenticator] {
  const userId = k * MFA_EVERY;
  const createdAt = MFA_CREATED + k * 60_000;
  const usedMask = k % 1024;
  return [
    { id: 2 * k - 1, userId, type: 'totp', data: `{"secret": "${totpSecret()}"}`, createdAt, lastUsedAt: k % 2 === 0 ? createdAt + 86_400_000 : null },
    { id: 2 * k, userId, type: 'recovery_codes', data: `{"seed": "${randomBytes(40).toString('hex')}", "used_mask": ${usedMask}}`, createdAt, lastUsedAt: usedMask === 0 ? null : createdAt + 3_600_000 },
  ];
}

/** DRF's key: 20 random bytes in hexadecimal. */
export const tokenKey = (): string => randomBytes(20).toString('hex');
