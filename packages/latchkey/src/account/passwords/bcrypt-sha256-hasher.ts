import { createHash } from 'node:crypto';
import { createBcryptFormatHasher } from './bcrypt-format.js';
import type { BcryptWorkerPool } from './bcrypt-worker-pool.js';
import type { PasswordHasher } from './hasher.js';

/**
 * bcrypt reads at most 72 bytes, so two long passwords sharing their first 72 bytes would match
 * each other. Django's bcrypt_sha256 feeds bcrypt the 64 ASCII characters of the password's hex
 * SHA-256 instead, so every byte of the password counts (Django ticket #20138).
 */
function bcryptInput(password: string): string {
  return createHash('sha256').update(password, 'utf8').digest('hex');
}

/** Django's BCryptSHA256PasswordHasher: `bcrypt_sha256$` followed by the bcrypt string. */
export function createBcryptSha256Hasher(rounds: number, workers: BcryptWorkerPool): PasswordHasher {
  return createBcryptFormatHasher('bcrypt_sha256', bcryptInput, rounds, workers);
}
