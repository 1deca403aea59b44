import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HasherName } from '../../config/choices.js';
import { createPasswordHashing, type PasswordHashing, type PasswordHashingOptions, type PasswordVerification } from './password-hashing.js';
import { DJANGO_HASHING_DEFAULTS } from '../../config/defaults.js';

/** Hashes made by Django 3.2's make_password: see test/fixtures/django-passwords/make_vectors.py. */
interface DjangoVector {
  hasher: HasherName;
  password: string;
  encoded: string;
  note?: string;
}
const fixture = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/django-passwords/vectors.json', import.meta.url), 'utf8'),
) as { vectors: DjangoVector[] };
const vectors = fixture.vectors;
/** The vectors made with the stock hashers, at Django's default parameters. */
const stock = vectors.filter((vector) => vector.note === undefined);
const noted = (text: string): DjangoVector => vectors.find((vector) => vector.note?.includes(text))!;

const opened: PasswordHashing[] = [];
function hashing(overrides: Partial<PasswordHashingOptions> = {}): PasswordHashing {
  // The vectors carry Django's real parameters; the service's own only matter for needsRehash.
  const service = createPasswordHashing({ ...DJANGO_HASHING_DEFAULTS, concurrency: availableParallelism(), maxQueued: 100, maxPasswordBytes: 4096, ...overrides });
  opened.push(service);
  return service;
}
afterAll(() => Promise.all(opened.map((service) => service.close())));

describe('hashes made by Django', () => {
  const service = hashing();
  /** Each vector verified once with its right password; the tests below read from this. */
  let withRightPassword: Map<DjangoVector, PasswordVerification>;
  beforeAll(async () => {
    const answers = await Promise.all(vectors.map((vector) => service.verify(vector.password, vector.encoded)));
    withRightPassword = new Map(vectors.map((vector, index) => [vector, answers[index]!]));
  });

  it('include every hasher, non-ASCII passwords and a 100-character one', () => {
    expect(new Set(stock.map((vector) => vector.hasher))).toEqual(new Set(['argon2', 'pbkdf2_sha256', 'pbkdf2_sha1', 'bcrypt_sha256']));
    expect(stock.some((vector) => /[^\x20-\x7e]/.test(vector.password))).toBe(true);
    expect(stock.some((vector) => vector.password.length === 100)).toBe(true);
  });

  it.each(vectors.map((vector) => [vector.note ?? `${vector.hasher}: ${JSON.stringify(vector.password.slice(0, 30))}`, vector] as const))(
    'verify with the right password only (%s)',
    async (_label, vector) => {
      const [wrong, truncated] = await Promise.all([
        service.verify(`${vector.password}!`, vector.encoded),
        service.verify(vector.password.slice(0, -1), vector.encoded),
      ]);
      expect(withRightPassword.get(vector)?.valid).toBe(true);
      expect(wrong.valid).toBe(false);
      expect(truncated.valid).toBe(false);
    },
  );

  it('ask to be rehashed unless they are argon2 with current parameters', () => {
    const needsRehash = (vector: DjangoVector): boolean | undefined => withRightPassword.get(vector)?.needsRehash;
    expect(stock.map(needsRehash)).toEqual(stock.map((vector) => vector.hasher !== 'argon2'));
    expect(needsRehash(noted('t=1, m=1024, p=2'))).toBe(true);
    expect(needsRehash(noted('16-byte hash'))).toBe(true);
  });

  it("need no rehash under their own hasher and Django 3.2's parameters, except for a short salt", async () => {
    // Django 3.2 wrote these with 260,000 iterations and 22-character salts.
    const pbkdf2 = hashing({ hashers: ['pbkdf2_sha256', 'argon2'], pbkdf2Iterations: 260_000 });
    for (const vector of stock.filter((candidate) => candidate.hasher === 'pbkdf2_sha256')) {
      expect(await pbkdf2.verify(vector.password, vector.encoded)).toEqual({ valid: true, needsRehash: false });
    }
    const shortSalt = noted('12-character salt');
    expect(await pbkdf2.verify(shortSalt.password, shortSalt.encoded)).toEqual({ valid: true, needsRehash: true });
    const fewIterations = noted('1000 iterations');
    expect(await pbkdf2.verify(fewIterations.password, fewIterations.encoded)).toEqual({ valid: true, needsRehash: true });

    const bcrypt = hashing({ hashers: ['bcrypt_sha256'], bcryptRounds: 12 });
    const vector = stock.find((candidate) => candidate.hasher === 'bcrypt_sha256')!;
    expect(await bcrypt.verify(vector.password, vector.encoded)).toEqual({ valid: true, needsRehash: false });
  });
});
