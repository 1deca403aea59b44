import { afterEach, describe, expect, it } from 'vitest';
import { isLatchkeyError, refusalsOf } from '../core/errors.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { testDatabaseKinds } from '../testing/database.js';
import { verifyCredentials } from './credentials.js';
import type { Store } from '../store.js';
import { issueApiToken, userForApiToken } from '../tokens/api-tokens.js';
import { createUser, deactivateUser, setUserPassword } from './users.js';

const PASSWORD = 'a long enough passphrase';

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; param: string | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isLatchkeyError(error)) return { code: error.code, param: error.param, message: error.message };
    throw error;
  }
  throw new Error('expected a LatchkeyError');
}

describe.each(testDatabaseKinds())('creating users on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('creates the user and a primary email address together', async () => {
    latchkey = await createTestLatchkey({ kind });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'Ada@Example.com', password: PASSWORD, name: 'Ada', emailVerified: true });
    expect(user).toMatchObject({ username: 'ada', email: 'ada@example.com', name: 'Ada', isActive: true, isStaff: false, lastLogin: null });
    expect(user.password).toMatch(/^argon2\$argon2id\$/);
    expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toEqual([
      expect.objectContaining({ email: 'ada@example.com', verified: true, primary: true }),
    ]);
  });

  it('refuses a weak password with every reason, and writes nothing', async () => {
    latchkey = await createTestLatchkey({ kind });
    const error: unknown = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: '1234', emailVerified: false }).catch((thrown: unknown) => thrown);
    if (!isLatchkeyError(error)) throw new Error('expected a LatchkeyError');
    expect(error).toMatchObject({ code: 'password_invalid', param: 'password' });
    // Each problem is its own refusal of the password field, as Django lists each validator's error.
    expect(refusalsOf(error).map((refusal) => [refusal.param, refusal.reason])).toEqual([
      ['password', 'password_too_short'],
      ['password', 'password_too_common'],
      ['password', 'password_entirely_numeric'],
    ]);
    expect(refusalsOf(error).map((refusal) => refusal.message).join(' ')).toMatch(/too short.*entirely numeric/);
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('refuses a duplicate username in any variant, and leaves no half-made account', async () => {
    latchkey = await createTestLatchkey({ kind });
    await createUser(latchkey.deps, { username: 'admin', email: 'a@example.com', password: PASSWORD, emailVerified: true });
    expect(await errorOf(createUser(latchkey.deps, { username: 'ＡＤＭＩＮ', email: 'b@example.com', password: PASSWORD, emailVerified: true }))).toMatchObject({
      code: 'username_taken',
    });
    expect(await latchkey.deps.store.users.count()).toBe(1);
    expect(await latchkey.deps.store.emailAddresses.listByEmail('b@example.com')).toEqual([]);
  });

  it('rolls back the user when its email address is refused (verified elsewhere)', async () => {
    latchkey = await createTestLatchkey({ kind });
    await createUser(latchkey.deps, { username: 'first', email: 'shared@example.com', password: PASSWORD, emailVerified: true });
    expect(await errorOf(createUser(latchkey.deps, { username: 'second', email: 'shared@example.com', password: PASSWORD, emailVerified: true }))).toMatchObject({
      code: 'email_taken',
    });
    expect(await latchkey.deps.store.users.findByUsername('second')).toBeUndefined();
  });

  it('in an email project: requires an email, refuses a username, and keeps emails unique', async () => {
    latchkey = await createTestLatchkey({ kind, usernameType: 'email' });
    expect(await errorOf(createUser(latchkey.deps, { password: PASSWORD, emailVerified: false }))).toMatchObject({ code: 'invalid_email', param: 'email' });
    expect(await errorOf(createUser(latchkey.deps, { username: 'x', email: 'x@example.com', password: PASSWORD, emailVerified: false }))).toMatchObject({
      param: 'username',
    });
    const results = await Promise.allSettled(
      ['grace@example.com', 'GRACE@example.com', 'Grace@Example.Com', 'grace@EXAMPLE.com'].map((email) =>
        createUser(latchkey.deps, { email, password: PASSWORD, emailVerified: false }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const result of results) if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'email_taken' });
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('makes an account without a usable password when none is given', async () => {
    latchkey = await createTestLatchkey({ kind });
    const user = await createUser(latchkey.deps, { username: 'social', email: 'social@example.com', password: null, emailVerified: true });
    expect(user.password).toMatch(/^!/);
    expect(await verifyCredentials(latchkey.deps, { login: 'social', password: user.password })).toBeUndefined();
  });

  it('setting a password validates it, replaces the hash and ends every session', async () => {
    latchkey = await createTestLatchkey({ kind });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const session = await latchkey.deps.sessions.create({ userId: user.id });
    expect(await errorOf(setUserPassword(latchkey.deps, user, 'ada@example.com'))).toMatchObject({ code: 'password_invalid' });
    expect(await latchkey.deps.sessions.load(session.id)).toBeDefined();
    await setUserPassword(latchkey.deps, user, 'another long passphrase');
    expect(await latchkey.deps.sessions.load(session.id)).toBeUndefined();
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: PASSWORD })).toBeUndefined();
    expect(await verifyCredentials(latchkey.deps, { login: 'ada', password: 'another long passphrase' })).toBeDefined();
  });

  it('deactivating signs the user out everywhere and deletes their API token, and reactivating brings neither back', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    const sessions = [await latchkey.deps.sessions.create({ userId: ada.id }), await latchkey.deps.sessions.create({ userId: ada.id })];
    const key = await issueApiToken(latchkey.deps, ada);
    const gracesSession = await latchkey.deps.sessions.create({ userId: grace.id });
    const gracesKey = await issueApiToken(latchkey.deps, grace);

    await deactivateUser(latchkey.deps, ada);
    expect((await latchkey.deps.store.users.findById(ada.id))?.isActive).toBe(false);
    for (const session of sessions) expect(await latchkey.deps.sessions.load(session.id)).toBeUndefined();
    expect(await latchkey.deps.store.apiTokens.findForUser(ada.id)).toBeUndefined();
    await latchkey.deps.store.users.update(ada.id, { isActive: true });
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
    // Nobody else's.
    expect(await latchkey.deps.sessions.load(gracesSession.id)).toBeDefined();
    expect(await userForApiToken(latchkey.deps, gracesKey)).toMatchObject({ id: grace.id });
  });

  it('deactivates all at once or not at all: a failure on the way leaves the account as it was', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const session = await latchkey.deps.sessions.create({ userId: ada.id });
    const key = await issueApiToken(latchkey.deps, ada);
    const { store } = latchkey.deps;
    // The last step (the token) fails, after the flag and the sessions were written in the transaction.
    const failing: Store = {
      ...store,
      transaction: (work) =>
        store.transaction((repositories) => work({ ...repositories, apiTokens: { ...repositories.apiTokens, deleteForUser: () => Promise.reject(new Error('connection lost')) } })),
    };
    await expect(deactivateUser({ store: failing, adapter: latchkey.deps.adapter }, ada)).rejects.toThrow('connection lost');
    expect((await store.users.findById(ada.id))?.isActive).toBe(true);
    expect(await latchkey.deps.sessions.load(session.id)).toBeDefined();
    expect(await userForApiToken(latchkey.deps, key)).toMatchObject({ id: ada.id });
  });
});
