import type { PasswordHashingOptions } from './password-hashing.js';

/**
 * Hashing options for tests: Django's formats and rules with the cheapest parameters each hasher
 * accepts, so a test suite can hash hundreds of passwords. Never for production: these hashes
 * fall to a single GPU in seconds. Hashes made with them report needsRehash under real settings.
 */
export function fastHashingOptions(overrides: Partial<PasswordHashingOptions> = {}): PasswordHashingOptions {
  return {
    hashers: ['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256', 'bcrypt'],
    argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 },
    pbkdf2Iterations: 1000,
    bcryptRounds: 4,
    concurrency: 4,
    maxQueued: 1000,
    maxPasswordBytes: 4096,
    ...overrides,
  };
}
