import { createBcryptFormatHasher } from './bcrypt-format.js';
import type { BcryptWorkerPool } from './bcrypt-worker-pool.js';
import type { PasswordHasher } from './hasher.js';

/**
 * Django's BCryptPasswordHasher: `bcrypt$` followed by the bcrypt string of the password itself,
 * of which bcrypt reads only the first 72 bytes (UTF-8), as Django's does. Django writes it only
 * when a project lists it first; users imported from such a project sign in with it, and their
 * hash is replaced by the preferred hasher's at that first login. Latchkey never writes it (see
 * READ_ONLY_HASHERS): two passwords that share their first 72 bytes match each other's hash.
 */
export function createBcryptHasher(rounds: number, workers: BcryptWorkerPool): PasswordHasher {
  return createBcryptFormatHasher('bcrypt', (password) => password, rounds, workers);
}
