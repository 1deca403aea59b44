/**
 * userOfPassedLogin: a login that passed every stage but was held back for "trust this browser?"
 * completes only for the account as it was when its password was proved.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../../testing/mfa.js';
import { createUser, deactivateUser, setUserPassword } from '../users.js';
import { continueLoginWithCode, loginWithPassword, userOfPassedLogin, type PendingLoginState } from './login.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('the account of a login held back after its last stage on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(() => latchkey.destroy());

  /** Ada logs in with her password and a right code: the state an adapter keeps while it asks about trust. */
  async function passedLogin(): Promise<PendingLoginState> {
    latchkey = await createTestLatchkey({ kind });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
    const stopped = await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, client });
    if (stopped.status !== 'stopped') throw new Error('expected the login to stop for the code');
    expect(await continueLoginWithCode(latchkey.deps, stopped.pending, totp.code(), { client })).toMatchObject({ status: 'authenticated' });
    return stopped.pending;
  }

  it('gives the user while the account is as the login found it', async () => {
    const pending = await passedLogin();
    expect(await userOfPassedLogin(latchkey.deps, pending)).toMatchObject({ id: ada.id, username: 'ada' });
  });

  it('gives nobody once the password has changed', async () => {
    const pending = await passedLogin();
    await setUserPassword(latchkey.deps, ada, 'another fine passphrase');
    expect(await userOfPassedLogin(latchkey.deps, pending)).toBeUndefined();
  });

  it('gives nobody once the account is deactivated', async () => {
    const pending = await passedLogin();
    await deactivateUser(latchkey.deps, ada);
    expect(await userOfPassedLogin(latchkey.deps, pending)).toBeUndefined();
  });

  it('gives nobody for a forged mark or an account that is gone', async () => {
    const pending = await passedLogin();
    expect(await userOfPassedLogin(latchkey.deps, { ...pending, credentialMark: 'f'.repeat(pending.credentialMark.length) })).toBeUndefined();
    expect(await userOfPassedLogin(latchkey.deps, { ...pending, credentialMark: '' })).toBeUndefined();
    // Another account's id with Ada's mark: the mark binds the user id too.
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    expect(await userOfPassedLogin(latchkey.deps, { ...pending, userId: bob.id })).toBeUndefined();
    expect(await userOfPassedLogin(latchkey.deps, { ...pending, userId: 999_999 })).toBeUndefined();
  });
});
