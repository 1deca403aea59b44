export type { Argon2Parameters } from './argon2-hasher.js';
export type { ConcurrencyStats } from './concurrency-limiter.js';
export { createPasswordHashing, type PasswordHashing, type PasswordHashingOptions, type PasswordVerification } from './password-hashing.js';
export { isUsablePassword, makeUnusablePassword } from './unusable-password.js';
export {
  validatePassword,
  type PasswordContext,
  type PasswordPolicy,
  type PasswordProblem,
  type PasswordValidatorName,
} from './validators.js';
