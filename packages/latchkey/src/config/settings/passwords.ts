/** "Passwords" in docs/settings.md: hashing, its limits, and the checks a new password must pass. */
import { availableParallelism } from 'node:os';
import { HASHER_NAMES, type HasherName } from '../choices.js';
import { integerField, listField } from '../fields.js';
import { setting, VALUE, type SettingGroup } from './declaration.js';

export const PASSWORD_VALIDATOR_NAMES = ['minimum_length', 'maximum_length', 'common', 'numeric', 'user_attribute_similarity'] as const;

/** The parameters of Django's password hashers, as the hashing service (account/passwords/) takes them. */
export interface DjangoHashingDefaults {
  hashers: HasherName[];
  argon2: { memoryCost: number; timeCost: number; parallelism: number };
  pbkdf2Iterations: number;
  bcryptRounds: number;
}

/**
 * Django's own parameters. The PBKDF2 count is that of Django 6.1 (August 2026), the current
 * release: 6.0 had 1,200,000, and the 6.2 release notes (docs.djangoproject.com/en/dev/releases/6.2/)
 * raise it "from 1,500,000 to 1,800,000". Argon2's m=102400, t=2, p=8 and bcrypt's 12 rounds are
 * unchanged since Django 3.2. The order is the one Django's documentation gives for using Argon2
 * (Argon2 first, the rest kept so old hashes still verify and get upgraded); Django's stock
 * PASSWORD_HASHERS lists PBKDF2 first instead. Plain `bcrypt` comes last, read only: Django's
 * stock list leaves it out because Django writes it only for a project that asks, but such a
 * project's users must sign in after moving here (manage import-django), as pbkdf2_sha1's do. A
 * reader costs nothing where no such hash is stored (the bcrypt threads start on first use), and
 * it widens nothing: a stored hash is matched only by its own password, and is replaced by an
 * argon2 hash at its first successful login.
 */
export const DJANGO_HASHING_DEFAULTS: DjangoHashingDefaults = Object.freeze({
  // Frozen all the way down, so no caller can change the defaults every other caller sees.
  hashers: Object.freeze(['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256', 'bcrypt']) as HasherName[],
  argon2: Object.freeze({ memoryCost: 102_400, timeCost: 2, parallelism: 8 }),
  pbkdf2Iterations: 1_500_000,
  bcryptRounds: 12,
});

// The hashing parameters are Django's (argon2 memory in KiB; PBKDF2 iterations of the current
// Django release), except in tests: real argon2id, with cheap parameters so the suite stays fast
// (Django's test settings do the same with a fast hasher). Production parameters are checked in
// their own tests.
const PASSWORD_SETTINGS = {
  PASSWORD_HASHERS: setting({
    field: listField(HASHER_NAMES, 1),
    default: { base: [...DJANGO_HASHING_DEFAULTS.hashers] },
    docs: {
      allowed:
        'list of `argon2`, `pbkdf2_sha256`, `pbkdf2_sha1`, `bcrypt_sha256`, `bcrypt`; at least one, none repeated, ' +
        '`bcrypt` not first',
      does:
        'The first hasher writes new hashes. The others can still check passwords stored in their format, and those ' +
        'hashes are upgraded at the next successful login. A stored hash in a format not listed here never matches. ' +
        "`bcrypt` (Django's plain `BCryptPasswordHasher`) is read only: it reads only 72 bytes of a password, so it " +
        'never writes hashes.',
    },
  }),
  PASSWORD_HASHING_QUEUE_LIMIT: setting({
    field: integerField(0, 1_000_000),
    // Logins beyond this many waiting for a hash are refused at once (server_busy, a 503) instead
    // of queueing without bound behind a flood.
    default: { base: 1000 },
    docs: {
      allowed: 'whole number 0–1000000',
      does:
        'The most password checks that may wait for a free slot. Beyond it a check is refused at once with the error ' +
        'code `server_busy` (HTTP 503) instead of queueing without bound behind a flood.',
    },
  }),
  PASSWORD_HASHING_CONCURRENCY: setting({
    field: integerField(1, 256),
    // argon2 and PBKDF2 run on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says
    // otherwise), which file access and DNS share: leave at least one thread free for them.
    default: { base: Math.max(1, Math.min(availableParallelism(), 3)) },
    docs: {
      allowed: 'whole number 1–256',
      default: 'the CPU count Node reports (`os.availableParallelism()`), but at most 3',
      does:
        'The most password hashes computed at once. Others wait their turn. This bounds memory: see ' +
        '[production.md](production.md#password-hashing-cpu-and-memory).',
    },
  }),
  ARGON2_MEMORY_COST: setting({
    field: integerField(8, 4 * 1024 * 1024),
    default: { base: DJANGO_HASHING_DEFAULTS.argon2.memoryCost, test: 64 },
    docs: {
      allowed: 'whole number of KiB, 8–4194304, and at least 8 × `ARGON2_PARALLELISM`',
      default: { base: `${VALUE} (100 MiB)` },
      does: 'Argon2 `m`.',
    },
  }),
  ARGON2_TIME_COST: setting({
    field: integerField(1, 100),
    default: { base: DJANGO_HASHING_DEFAULTS.argon2.timeCost, test: 1 },
    docs: {
      allowed: 'whole number 1–100',
      does: 'Argon2 `t`.',
    },
  }),
  ARGON2_PARALLELISM: setting({
    field: integerField(1, 64),
    default: { base: DJANGO_HASHING_DEFAULTS.argon2.parallelism, test: 1 },
    docs: {
      allowed: 'whole number 1–64',
      does: 'Argon2 `p`.',
    },
  }),
  PBKDF2_ITERATIONS: setting({
    field: integerField(1, 100_000_000),
    default: { base: DJANGO_HASHING_DEFAULTS.pbkdf2Iterations, test: 1000 },
    docs: {
      allowed: 'whole number 1–100000000',
      does: 'Iterations for new `pbkdf2_sha256` and `pbkdf2_sha1` hashes.',
    },
  }),
  BCRYPT_ROUNDS: setting({
    field: integerField(4, 31),
    default: { base: DJANGO_HASHING_DEFAULTS.bcryptRounds, test: 4 },
    docs: {
      allowed: 'whole number 4–31',
      does:
        'Cost for new `bcrypt_sha256` hashes. Stored bcrypt hashes of another cost are rewritten at the next successful ' +
        'login.',
    },
  }),
  AUTH_PASSWORD_VALIDATORS: setting({
    field: listField(PASSWORD_VALIDATOR_NAMES),
    default: { base: ['minimum_length', 'maximum_length', 'common', 'numeric', 'user_attribute_similarity'] },
    docs: {
      allowed: 'list of `minimum_length`, `maximum_length`, `common`, `numeric`, `user_attribute_similarity`; may be empty',
      default: 'all five',
      does: 'The checks that a new password must pass. See [passwords.md](passwords.md#password-validators).',
    },
  }),
  PASSWORD_MIN_LENGTH: setting({
    field: integerField(1, 1024),
    default: { base: 8 },
    docs: {
      allowed: 'whole number 1–1024',
      does: 'Minimum length in characters, for `minimum_length`.',
    },
  }),
  PASSWORD_MAX_BYTES: setting({
    field: integerField(64, 65536),
    default: { base: 4096 },
    docs: {
      allowed: 'whole number 64–65536',
      does: 'Maximum length in UTF-8 bytes. Longer passwords are never hashed, whether or not `maximum_length` is listed.',
    },
  }),
};

export const PASSWORDS: SettingGroup<typeof PASSWORD_SETTINGS> = { id: 'passwords', settings: PASSWORD_SETTINGS };
