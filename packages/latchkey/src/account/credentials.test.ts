import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { testDatabaseKinds } from '../testing/database.js';
import { verifyCredentials } from './credentials.js';
import { createUser } from './users.js';

interface Vector { hasher: string; password: string; encoded: string }
const vectors = (JSON.parse(readFileSync(new URL('../../test/fixtures/django-passwords/vectors.json', import.meta.url), 'utf8')) as { vectors: Vector[] }).vectors;
const djangoVector = (hasher: string) => vectors.find((vector) => vector.hasher === hasher)!;

describe.each(testDatabaseKinds())('the credentials stage on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function userWithHash(encoded: string) {
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    await latchkey.deps.store.users.update(user.id, { password: encoded });
    return user;
  }

  it('logs in with a Django PBKDF2 hash and leaves an argon2 hash behind', async () => {
    latchkey = await createTestLatchkey({ kind });
    const vector = djangoVector('pbkdf2_sha256');
    const user = await userWithHash(vector.encoded);
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: vector.password })).toMatchObject({ id: user.id });
    const stored = (await latchkey.deps.store.users.findById(user.id))!.password;
    expect(stored).toMatch(/^argon2\$argon2id\$v=19\$m=64,t=1,p=1\$/);
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: vector.password })).toBeDefined();
  });

  it('upgrades Django bcrypt_sha256 hashes too, and accepts Django argon2 hashes', async () => {
    latchkey = await createTestLatchkey({ kind });
    const bcrypt = djangoVector('bcrypt_sha256');
    const user = await userWithHash(bcrypt.encoded);
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: bcrypt.password })).toBeDefined();
    expect((await latchkey.deps.store.users.findById(user.id))!.password).toMatch(/^argon2\$/);
    const argon2 = djangoVector('argon2');
    await latchkey.deps.store.users.update(user.id, { password: argon2.encoded });
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: argon2.password })).toBeDefined();
  });

  it('leaves the hash alone on a wrong password', async () => {
    latchkey = await createTestLatchkey({ kind });
    const vector = djangoVector('pbkdf2_sha256');
    const user = await userWithHash(vector.encoded);
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: 'wrong password' })).toBeUndefined();
    expect((await latchkey.deps.store.users.findById(user.id))!.password).toBe(vector.encoded);
  });

  it('costs exactly one hash whether the account exists, has no usable password, or the password is wrong', async () => {
    latchkey = await createTestLatchkey({ kind });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: 'a long enough passphrase', emailVerified: true });
    await createUser(latchkey.deps, { username: 'social', email: 'social@example.com', password: null, emailVerified: true });
    const { passwords } = latchkey.deps;
    for (const login of ['nobody', 'ada', 'social', 'not an @ email']) {
      const before = passwords.stats().completed;
      expect(await verifyCredentials(latchkey.deps, { login, password: 'wrong password' })).toBeUndefined();
      expect(passwords.stats().completed - before, login).toBe(1);
    }
  });

  it('finds one account from case, width and NFKC variants of a username', async () => {
    latchkey = await createTestLatchkey({ kind });
    await createUser(latchkey.deps, { username: 'Admin', email: 'admin@example.com', password: 'a long enough passphrase', emailVerified: true });
    for (const login of ['Admin', 'admin', 'ADMIN', 'ＡＤＭＩＮ', ' admin ']) {
      expect(await verifyCredentials(latchkey.deps, { login, password: 'a long enough passphrase' }), login).toBeDefined();
    }
  });

  it('in a username project, an email login reaches the account that verified the address, never a squatter', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_METHODS: ['username', 'email'] } });
    const squatter = await createUser(latchkey.deps, { username: 'squatter', email: 'victim@example.com', password: 'squatter passphrase', emailVerified: false });
    const victim = await createUser(latchkey.deps, { username: 'victim', email: 'victim@example.com', password: 'victim passphrase', emailVerified: true });
    expect(await verifyCredentials(latchkey.deps, { login: 'victim@example.com', password: 'victim passphrase' })).toMatchObject({ id: victim.id });
    expect(await verifyCredentials(latchkey.deps, { login: 'victim@example.com', password: 'squatter passphrase' })).toBeUndefined();
    // Unverified and shared by two accounts: ambiguous, so no email login at all.
    await createUser(latchkey.deps, { username: 'twin', email: 'shared@example.com', password: 'twin passphrase', emailVerified: false });
    await createUser(latchkey.deps, { username: 'other', email: 'shared@example.com', password: 'other passphrase', emailVerified: false });
    expect(await verifyCredentials(latchkey.deps, { login: 'shared@example.com', password: 'twin passphrase' })).toBeUndefined();
    // Unverified but unambiguous: that account.
    expect(await verifyCredentials(latchkey.deps, { login: 'victim@example.com', password: 'victim passphrase' })).toBeDefined();
    expect(squatter.id).not.toBe(victim.id);
  });

  it('logs in by email when the project uses email, in any case or width', async () => {
    latchkey = await createTestLatchkey({ kind, usernameType: 'email' });
    await createUser(latchkey.deps, { email: 'Grace@Example.com', password: 'a long enough passphrase', emailVerified: true });
    for (const login of ['grace@example.com', 'GRACE@EXAMPLE.COM', 'ｇｒａｃｅ＠example.com']) {
      expect(await verifyCredentials(latchkey.deps, { login, password: 'a long enough passphrase' }), login).toBeDefined();
    }
    expect(await verifyCredentials(latchkey.deps, { login: 'grace', password: 'a long enough passphrase' })).toBeUndefined();
  });
});
