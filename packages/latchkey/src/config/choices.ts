/**
 * The values some settings choose among. They are defined here, at the bottom, so that the
 * settings can be checked at start-up without importing the features that use them; the features
 * import them from here.
 */

/**
 * The hashers Latchkey reads and writes, named as Django names them in the encoded string. The one
 * list: the PASSWORD_HASHERS setting and the hashing service (account/passwords/) both read it here.
 */
export const HASHER_NAMES = ['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256', 'bcrypt'] as const;

export type HasherName = (typeof HASHER_NAMES)[number];

/**
 * Hashers that only check stored passwords and never write one, so PASSWORD_HASHERS may not list
 * them first. Plain `bcrypt` (Django's BCryptPasswordHasher) reads only the first 72 bytes of a
 * password, so two passwords sharing those bytes match each other's hash; `bcrypt_sha256` writes
 * bcrypt without that flaw, and Django reads it too.
 */
export const READ_ONLY_HASHERS: readonly HasherName[] = ['bcrypt'];

/** The kinds of second factor (allauth.mfa's authenticator types), for MFA_SUPPORTED_TYPES and the mfa model. */
export const AUTHENTICATOR_TYPES = ['totp', 'recovery_codes', 'webauthn'] as const;

/** A kind of second factor: `totp`, `recovery_codes` or `webauthn` (allauth.mfa's names). */
export type AuthenticatorType = (typeof AUTHENTICATOR_TYPES)[number];

/** The ways in after which ACCOUNT_LOGIN_BY_CODE_REQUIRED may ask for a mailed code (allauth's names). */
export const LOGIN_BY_CODE_REQUIRED_METHODS = ['password', 'mfa', 'socialaccount'] as const;

export type LoginByCodeRequiredMethod = (typeof LOGIN_BY_CODE_REQUIRED_METHODS)[number];
