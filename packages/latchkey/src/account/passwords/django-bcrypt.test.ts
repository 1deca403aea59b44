/**
 * Django's plain bcrypt hasher (BCryptPasswordHasher, `bcrypt$`): hashes made by real Django are
 * checked here exactly as Django checks them, 72-byte limit included, only while `bcrypt` is in
 * PASSWORD_HASHERS, and replaced by the preferred hasher's at the first successful login.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { verifyCredentials } from '../credentials.js';
import { createUser } from '../users.js';
import { DJANGO_HASHING_DEFAULTS } from '../../config/defaults.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { createPasswordHashing, type PasswordHashing, type PasswordHashingOptions } from './password-hashing.js';

/** Hashes made by Django 3.2's make_password, with Django's answers: see test/fixtures/django-passwords/make_bcrypt_vectors.py. */
interface BcryptVector {
  note: string;
  password: string;
  encoded: string;
  checks: { password: string; django: boolean }[];
}
const vectors = (
  JSON.parse(readFileSync(new URL('../../../test/fixtures/django-passwords/bcrypt-vectors.json', import.meta.url), 'utf8')) as { vectors: BcryptVector[] }
).vectors;
const vectorNoted = (text: string): BcryptVector => vectors.find((vector) => vector.note.includes(text))!;
/** The plain ASCII vector at bcrypt's lowest cost (4), the one the tests below use most. */
const cheapAscii = vectors.find((vector) => vector.note === 'ASCII')!;

const opened: PasswordHashing[] = [];
function hashing(overrides: Partial<PasswordHashingOptions> = {}): PasswordHashing {
  const service = createPasswordHashing({ ...DJANGO_HASHING_DEFAULTS, concurrency: availableParallelism(), maxQueued: 1000, maxPasswordBytes: 4096, ...overrides });
  opened.push(service);
  return service;
}
afterAll(() => Promise.all(opened.map((service) => service.close())));

describe("Django's plain bcrypt hashes", () => {
  it('cover the cases that matter: Django’s default cost, non-ASCII, 72 bytes and over, $2a$', () => {
    expect(vectors.every((vector) => vector.encoded.startsWith('bcrypt$$2'))).toBe(true);
    expect(vectors.some((vector) => vector.encoded.startsWith('bcrypt$$2b$12$'))).toBe(true);
    expect(vectors.some((vector) => vector.encoded.startsWith('bcrypt$$2a$'))).toBe(true);
    expect(vectors.some((vector) => Buffer.byteLength(vector.password) > 72)).toBe(true);
    expect(vectors.some((vector) => /[^\x20-\x7e]/.test(vector.password))).toBe(true);
  });

  it.each(vectors.map((vector) => [vector.note, vector] as const))('verify as Django verifies them (%s)', async (_note, vector) => {
    const service = hashing();
    const answers = await Promise.all(vector.checks.map(async (check) => (await service.verify(check.password, vector.encoded)).valid));
    expect(answers).toEqual(vector.checks.map((check) => check.django));
    expect(vector.checks.find((check) => check.password === vector.password)?.django).toBe(true);
  });

  it('read only the first 72 bytes of a password, as Django does', async () => {
    const service = hashing();
    const long = vectorNoted('80 bytes');
    expect((await service.verify(`${long.password.slice(0, 72)}anything`, long.encoded)).valid).toBe(true);
    expect((await service.verify(long.password.slice(0, 71), long.encoded)).valid).toBe(false);
    // The 72nd byte may be half a character: what counts is the bytes, not the characters.
    const straddling = vectorNoted('2-byte character');
    expect((await service.verify(`a${'é'.repeat(35)}è`, straddling.encoded)).valid).toBe(true);
    expect((await service.verify(`a${'é'.repeat(35)}e`, straddling.encoded)).valid).toBe(false);
  });

  it('always ask to be rehashed: Latchkey never writes them', async () => {
    const service = hashing();
    for (const vector of vectors) expect(await service.verify(vector.password, vector.encoded), vector.note).toEqual({ valid: true, needsRehash: true });
    // Even when bcrypt_sha256 at the vector's own cost is the preferred hasher.
    const sha256First = hashing({ hashers: ['bcrypt_sha256', 'bcrypt'], bcryptRounds: 4 });
    expect(cheapAscii.encoded).toMatch(/^bcrypt\$\$2b\$04\$/);
    expect(await sha256First.verify(cheapAscii.password, cheapAscii.encoded)).toEqual({ valid: true, needsRehash: true });
  });

  it('never match when bcrypt is not in the hashers, as in Django', async () => {
    const service = hashing({ hashers: ['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256'] });
    expect(await service.verify(cheapAscii.password, cheapAscii.encoded)).toEqual({ valid: false, needsRehash: false });
  });

  it('are not taken for bcrypt_sha256 hashes, nor these for them', async () => {
    const service = hashing();
    const { password, encoded } = cheapAscii;
    expect((await service.verify(password, encoded.replace(/^bcrypt\$/, 'bcrypt_sha256$'))).valid).toBe(false);
    const sha256 = await hashing({ hashers: ['bcrypt_sha256'], bcryptRounds: 4 }).hash(password);
    expect((await service.verify(password, sha256.replace(/^bcrypt_sha256\$/, 'bcrypt$'))).valid).toBe(false);
  });
});

describe.each(testDatabaseKinds())('logging in with a Django plain bcrypt hash on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('logs in and leaves a hash of the preferred hasher behind', async () => {
    latchkey = await createTestLatchkey({ kind });
    const vector = vectorNoted('Latin-1');
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    await latchkey.deps.store.users.update(user.id, { password: vector.encoded });

    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: `${vector.password}!` })).toBeUndefined();
    expect((await latchkey.deps.store.users.findById(user.id))!.password).toBe(vector.encoded);

    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: vector.password })).toMatchObject({ id: user.id });
    const stored = (await latchkey.deps.store.users.findById(user.id))!.password;
    expect(stored.startsWith(`${latchkey.settings.PASSWORD_HASHERS[0]}$`)).toBe(true);
    expect(stored).toMatch(/^argon2\$argon2id\$/);
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: vector.password })).toMatchObject({ id: user.id });
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: `${vector.password}!` })).toBeUndefined();
  });
});
