import bcrypt from 'bcryptjs';
import { afterAll, describe, expect, it } from 'vitest';
import { createArgon2Hasher } from './argon2-hasher.js';
import { createBcryptHasher } from './bcrypt-hasher.js';
import { createBcryptSha256Hasher } from './bcrypt-sha256-hasher.js';
import { createBcryptWorkerPool } from './bcrypt-worker-pool.js';
import type { PasswordHasher } from './hasher.js';
import { createPbkdf2Hasher } from './pbkdf2-hasher.js';

const workers = createBcryptWorkerPool(2);
afterAll(() => workers.close());

const argon2 = createArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 });
const pbkdf2Sha256 = createPbkdf2Hasher('sha256', 1000);
const pbkdf2Sha1 = createPbkdf2Hasher('sha1', 1000);
const bcryptSha256 = createBcryptSha256Hasher(4, workers);
const hashers: PasswordHasher[] = [argon2, pbkdf2Sha256, pbkdf2Sha1, bcryptSha256];

const ALPHANUMERIC_SALT = /^[A-Za-z0-9]{22}$/;

describe.each(hashers.map((hasher) => [hasher.algorithm, hasher] as const))('%s', (_name, hasher) => {
  it('verifies the password it hashed, and no other', async () => {
    const encoded = await hasher.encode('correct horse battery staple');
    expect(encoded.startsWith(`${hasher.algorithm}$`)).toBe(true);
    expect(hasher.recognizes(encoded)).toBe(true);
    expect(await hasher.verify('correct horse battery staple', encoded)).toBe(true);
    expect(await hasher.verify('correct horse battery stapler', encoded)).toBe(false);
    expect(await hasher.verify('', encoded)).toBe(false);
  });

  it('makes a new salt for every hash', async () => {
    const first = await hasher.encode('same password');
    const second = await hasher.encode('same password');
    expect(first).not.toBe(second);
  });

  it('handles long and non-ASCII passwords whole', async () => {
    for (const password of ['é'.repeat(64), 'x'.repeat(100), '🔑'.repeat(300)]) {
      const encoded = await hasher.encode(password);
      expect(await hasher.verify(password, encoded)).toBe(true);
      expect(await hasher.verify(password.slice(0, -1), encoded)).toBe(false);
    }
  });

  it('does not ask to rehash its own fresh hash', async () => {
    expect(hasher.mustUpdate(await hasher.encode('pw'))).toBe(false);
  });

  it('makes decoys that look like current hashes and match nothing', async () => {
    const decoy = hasher.makeDecoy();
    expect(hasher.recognizes(decoy)).toBe(true);
    expect(hasher.mustUpdate(decoy)).toBe(false);
    expect(await hasher.verify('', decoy)).toBe(false);
    expect(await hasher.verify('password', decoy)).toBe(false);
  });

  it('does not recognize malformed or foreign hashes', async () => {
    const encoded = await hasher.encode('pw');
    const malformed = [
      '',
      hasher.algorithm,
      `${hasher.algorithm}$`,
      `${encoded}$extra`,
      encoded.slice(0, -10),
      encoded.replace(hasher.algorithm, 'md5'),
      'sha1$$0123456789abcdef0123456789abcdef01234567',
    ];
    for (const value of malformed) {
      expect(hasher.recognizes(value), value).toBe(false);
      expect(await hasher.verify('pw', value), value).toBe(false);
    }
  });
});

describe('argon2', () => {
  it("writes Django's format: argon2id v19, the configured m/t/p, an alphanumeric salt, a 32-byte digest", async () => {
    const encoded = await argon2.encode('pw');
    const match = /^argon2\$argon2id\$v=19\$m=1024,t=1,p=1\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(encoded);
    expect(match).not.toBeNull();
    expect(Buffer.from(match![1]!, 'base64').toString('latin1')).toMatch(ALPHANUMERIC_SALT);
    expect(Buffer.from(match![2]!, 'base64')).toHaveLength(32);
  });

  it('asks to rehash when m, t, p, the variety, the digest length or the salt differ', async () => {
    const encoded = await argon2.encode('pw');
    expect(createArgon2Hasher({ memoryCost: 2048, timeCost: 1, parallelism: 1 }).mustUpdate(encoded)).toBe(true);
    expect(createArgon2Hasher({ memoryCost: 1024, timeCost: 2, parallelism: 1 }).mustUpdate(encoded)).toBe(true);
    expect(createArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 2 }).mustUpdate(encoded)).toBe(true);
    expect(argon2.mustUpdate(encoded.replace('$argon2id$', '$argon2i$'))).toBe(true);
    // 16 bytes of digest, as Django 3.2 with argon2-cffi 21.1 wrote.
    expect(argon2.mustUpdate(encoded.replace(/\$[^$]+$/, '$AAAAAAAAAAAAAAAAAAAAAA'))).toBe(true);
    // A 16-byte salt of random bytes reads as 16 characters: 95 bits by Django's measure.
    expect(argon2.mustUpdate(encoded.replace(/\$[^$]+\$([^$]+)$/, '$AAAAAAAAAAAAAAAAAAAAAA$$$1'))).toBe(true);
  });
  it('verifies the argon2i hashes without `v=` that early Django and argon2-cffi wrote, and upgrades them', async () => {
    // argon2-cffi: hash_secret(b'pw', b'abcdefghijklmnop', time_cost=2, memory_cost=512,
    // parallelism=2, hash_len=16, type=Type.I, version=0x10), with `v=16$` removed.
    const legacy = 'argon2$argon2i$m=512,t=2,p=2$YWJjZGVmZ2hpamtsbW5vcA$LCsA2mT10QInxKMiZyE1dQ';
    expect(await argon2.verify('pw', legacy)).toBe(true);
    expect(await argon2.verify('px', legacy)).toBe(false);
    expect(argon2.mustUpdate(legacy)).toBe(true);
  });
});

describe('pbkdf2', () => {
  it("writes Django's format with a 22-character salt and a digest of the hash's own size", async () => {
    const sha256 = (await pbkdf2Sha256.encode('pw')).split('$');
    expect(sha256).toHaveLength(4);
    expect(sha256.slice(0, 2)).toEqual(['pbkdf2_sha256', '1000']);
    expect(sha256[2]).toMatch(ALPHANUMERIC_SALT);
    expect(Buffer.from(sha256[3]!, 'base64')).toHaveLength(32);
    const sha1 = (await pbkdf2Sha1.encode('pw')).split('$');
    expect(Buffer.from(sha1[3]!, 'base64')).toHaveLength(20);
  });

  it('asks to rehash on another iteration count or a salt under 128 bits', async () => {
    const encoded = await pbkdf2Sha256.encode('pw');
    expect(createPbkdf2Hasher('sha256', 2000).mustUpdate(encoded)).toBe(true);
    const [algorithm, iterations, , digest] = encoded.split('$');
    expect(pbkdf2Sha256.mustUpdate([algorithm, iterations, 'abcdefghijkl', digest].join('$'))).toBe(true);
  });
});

describe('bcrypt_sha256', () => {
  it("writes Django's format: bcrypt_sha256$ then a $2b$ bcrypt string at the configured cost", async () => {
    expect(await bcryptSha256.encode('pw')).toMatch(/^bcrypt_sha256\$\$2b\$04\$[./A-Za-z0-9]{53}$/);
  });

  it('tells apart passwords that share their first 72 bytes, which plain bcrypt cannot', async () => {
    const first = `${'a'.repeat(72)}first`;
    const second = `${'a'.repeat(72)}second`;
    // The hazard this hasher exists for: bcrypt alone ignores everything after byte 72.
    expect(bcrypt.compareSync(second, bcrypt.hashSync(first, 4))).toBe(true);

    const encoded = await bcryptSha256.encode(first);
    expect(await bcryptSha256.verify(first, encoded)).toBe(true);
    expect(await bcryptSha256.verify(second, encoded)).toBe(false);
  });

  it('asks to rehash at another cost', async () => {
    const encoded = await bcryptSha256.encode('pw');
    expect(createBcryptSha256Hasher(5, workers).mustUpdate(encoded)).toBe(true);
  });
});

describe('bcrypt (plain, read only)', () => {
  const plain = createBcryptHasher(4, workers);

  it("checks Django's format: bcrypt$ then a bcrypt string of the password itself", async () => {
    const bcryptString = bcrypt.hashSync('correct horse battery staple', 4);
    const encoded = `bcrypt$${bcryptString}`;
    expect(plain.recognizes(encoded)).toBe(true);
    expect(await plain.verify('correct horse battery staple', encoded)).toBe(true);
    expect(await plain.verify('correct horse battery stapler', encoded)).toBe(false);
    expect(plain.mustUpdate(encoded)).toBe(false);
    expect(createBcryptHasher(5, workers).mustUpdate(encoded)).toBe(true);
    // Its own encode writes the same format (PASSWORD_HASHERS never lets it write, though).
    expect(await plain.encode('pw')).toMatch(/^bcrypt\$\$2b\$04\$[./A-Za-z0-9]{53}$/);
  });

  it('reads only the first 72 bytes, as bcrypt does', async () => {
    const encoded = await plain.encode(`${'a'.repeat(72)}first`);
    expect(await plain.verify(`${'a'.repeat(72)}second`, encoded)).toBe(true);
    expect(await plain.verify('a'.repeat(71), encoded)).toBe(false);
  });

  it('makes decoys that match nothing, and does not recognize malformed or foreign hashes', async () => {
    const decoy = plain.makeDecoy();
    expect(plain.recognizes(decoy)).toBe(true);
    expect(await plain.verify('', decoy)).toBe(false);
    const sha256 = await bcryptSha256.encode('pw');
    for (const value of ['bcrypt$', 'bcrypt$$2b$03$' + 'a'.repeat(53), 'bcrypt$$2x$04$' + 'a'.repeat(53), sha256, sha256.slice('bcrypt_sha256'.length).replace(/^/, 'bcrypt') + 'x', `${decoy}$extra`]) {
      expect(plain.recognizes(value), value).toBe(false);
      expect(await plain.verify('pw', value), value).toBe(false);
    }
    expect(bcryptSha256.recognizes(decoy)).toBe(false);
  });
});
