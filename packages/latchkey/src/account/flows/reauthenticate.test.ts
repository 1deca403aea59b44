import { afterEach, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { createPbkdf2Hasher } from '../passwords/pbkdf2-hasher.js';
import { createUser } from '../users.js';
import { INCORRECT_PASSWORD, reauthenticate } from './reauthenticate.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('reauthentication flow on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('accepts the right password and refuses anything else with one message', async () => {
    latchkey = await createTestLatchkey({ kind });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await expect(reauthenticate(latchkey.deps, { user, password: PASSWORD, client })).resolves.toBeUndefined();
    for (const password of ['', 'wrong password', 'x'.repeat(1_000_000)]) {
      await expect(reauthenticate(latchkey.deps, { user, password, client })).rejects.toMatchObject({ code: 'invalid_credentials', message: INCORRECT_PASSWORD.id, param: 'password' });
    }
  });

  it('refuses an account without a usable password the same way', async () => {
    latchkey = await createTestLatchkey({ kind });
    const user = await createUser(latchkey.deps, { username: 'social', email: 's@example.com', password: null, emailVerified: true });
    await expect(reauthenticate(latchkey.deps, { user, password: 'anything at all', client })).rejects.toMatchObject({ message: INCORRECT_PASSWORD.id });
  });

  it('counts every attempt against the per-user limit, the right password included', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_RATE_LIMITS: { reauthenticate: '2/m/user' } } });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await reauthenticate(latchkey.deps, { user, password: 'wrong', client }).catch(() => undefined);
    await reauthenticate(latchkey.deps, { user, password: PASSWORD, client });
    await expect(reauthenticate(latchkey.deps, { user, password: PASSWORD, client: { ...client, ip: '198.51.100.1' } })).rejects.toMatchObject({ code: 'rate_limited' });
    latchkey.clock.advance(61_000);
    await expect(reauthenticate(latchkey.deps, { user, password: PASSWORD, client })).resolves.toBeUndefined();
  });

  it('upgrades a password stored with an older hasher, as a login does', async () => {
    latchkey = await createTestLatchkey({ kind });
    const created = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const old = await createPbkdf2Hasher('sha256', 1000).encode(PASSWORD);
    await latchkey.deps.store.users.update(created.id, { password: old });
    const user = (await latchkey.deps.store.users.findById(created.id))!;
    await reauthenticate(latchkey.deps, { user, password: PASSWORD, client });
    expect((await latchkey.deps.store.users.findById(user.id))!.password.startsWith('argon2$')).toBe(true);
  });
});
