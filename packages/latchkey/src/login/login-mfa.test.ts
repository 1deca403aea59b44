/**
 * The login pipeline with a second factor: the password, then the stages (verify_email, then
 * mfa_authenticate), then done; codes limited like passwords; "trust this browser"; and
 * reauthentication with a code.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { INCORRECT_CODE, reauthenticateWithCode, trustThisBrowser } from '../mfa/flows/authenticate.js';
import { regenerateRecoveryCodes } from '../mfa/flows/recovery-codes.js';
import { deactivateTotp } from '../mfa/flows/totp.js';
import { trustToken } from '../mfa/trust.js';
import type { User } from '../account/model.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../testing/mfa.js';
import { createUser, setUserPassword } from '../account/users.js';
import { loginWithPassword } from './password.js';
import { continueLogin, pendingLoginState } from './pipeline.js';
import { PASSWORD as PASSWORD_FACTOR } from './proofs.js';
import { LOGIN_STAGES } from './stages.js';
import { TOO_MANY_ATTEMPTS } from '../account/credentials.js';
import { reauthenticate } from '../account/flows/reauthenticate.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

it('runs the mailed code first (allauth\'s order), then the email stage, then the code stage, asks to trust the browser, and makes a passkey signup\'s passkey last', () => {
  expect(LOGIN_STAGES).toEqual(['login_by_code', 'verify_email', 'mfa_authenticate', 'mfa_trust', 'mfa_signup_webauthn']);
});

describe.each(testDatabaseKinds())('login with a second factor on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(() => latchkey.destroy());

  async function setUp(options: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...options });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
  }

  const login = (fields: Partial<Parameters<typeof loginWithPassword>[1]> = {}) => loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, client, ...fields });
  const passwordProved = () => pendingLoginState(latchkey.deps, ada, [PASSWORD_FACTOR]);
  const giveCode = (code: string, from = client) => continueLogin(latchkey.deps, passwordProved(), { code }, { client: from });
  const wrongCode = () => String((Number(totp.code()) + 1) % 1_000_000).padStart(6, '0');
  const events = async (user: User, name: string) => (await latchkey.deps.store.auditLog.listForUser(user.id, 1000)).filter((record) => record.event === name);

  it('stops at mfa_authenticate after the right password, and creates no session', async () => {
    await setUp();
    expect(await login()).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate', user: { id: ada.id } });
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
    expect(await events(ada, 'user_logged_in')).toEqual([]);
    // Carrying on without a code gets no further.
    expect(await continueLogin(latchkey.deps, passwordProved(), {}, { client })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
  });

  it('ends a pending login when the password changes meanwhile: not even the right code finishes it', async () => {
    await setUp();
    const stopped = await login();
    if (stopped.status !== 'stopped') throw new Error('expected the login to stop for the code');
    await setUserPassword(latchkey.deps, ada, NEW_PASSWORD);
    expect(await continueLogin(latchkey.deps, stopped.pending, { code: totp.code() }, { client })).toEqual({ status: 'ended' });
    expect(await continueLogin(latchkey.deps, stopped.pending, {}, { client })).toEqual({ status: 'ended' });
    // A login with the new password stops for a code again, and that code finishes it.
    const again = await login({ password: NEW_PASSWORD });
    if (again.status !== 'stopped') throw new Error('expected the login to stop for the code');
    expect(await continueLogin(latchkey.deps, again.pending, { code: totp.code() }, { client })).toMatchObject({ status: 'authenticated' });
  });

  it('refuses a pending state whose mark was forged or belongs to another user', async () => {
    await setUp();
    const stopped = await login();
    if (stopped.status !== 'stopped') throw new Error('expected the login to stop for the code');
    expect(await continueLogin(latchkey.deps, { ...stopped.pending, credentialMark: 'forged' }, { code: totp.code() }, { client })).toEqual({ status: 'ended' });
    expect(await continueLogin(latchkey.deps, { ...stopped.pending, userId: ada.id + 1 }, {}, { client })).toEqual({ status: 'ended' });
  });

  it('refuses a wrong password before asking for any code', async () => {
    await setUp();
    await expect(login({ password: 'not the password' })).rejects.toMatchObject({ code: 'invalid_credentials' });
  });

  it('completes with the right code (proofs: password, totp), still without a session of its own', async () => {
    await setUp();
    await login();
    const result = await giveCode(totp.code());
    expect(result).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'totp' }], user: { id: ada.id } });
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
    expect((await events(ada, 'authenticator_used')).map((record) => record.data)).toEqual([{ type: 'totp', purpose: 'login' }]);
  });

  it('completes with a recovery code (proofs: password, recovery_codes), each code once', async () => {
    await setUp();
    await login();
    expect(await giveCode(totp.recoveryCodes[0]!)).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'recovery_codes' }] });
    await login();
    await expect(giveCode(totp.recoveryCodes[0]!)).rejects.toMatchObject({ code: 'incorrect_code' });
    expect(await giveCode(totp.recoveryCodes[1]!)).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'recovery_codes' }] });
  });

  it('refuses a wrong code with "Incorrect code." and records authentication_failed', async () => {
    await setUp();
    await login();
    for (const code of [wrongCode(), '', totp.recoveryCodes[0]!.slice(1), 'x'.repeat(100)]) {
      await expect(giveCode(code)).rejects.toMatchObject({ code: 'incorrect_code', message: INCORRECT_CODE.id, param: 'code' });
    }
    expect(INCORRECT_CODE.id).toBe('Incorrect code.');
    const failed = await events(ada, 'authentication_failed');
    expect(failed).toHaveLength(4);
    for (const record of failed) expect(record.data).toEqual({ method: 'mfa', purpose: 'login' });
    // None of it used the right code up.
    expect(await giveCode(totp.code())).toMatchObject({ status: 'authenticated' });
  });

  it('refuses the same code twice', async () => {
    await setUp();
    await login();
    const code = totp.code();
    expect(await giveCode(code)).toMatchObject({ status: 'authenticated' });
    await login();
    await expect(giveCode(code)).rejects.toMatchObject({ code: 'incorrect_code' });
  });

  it('counts wrong codes against login_failed: past the per-account limit even the right code is refused, as too many passwords are', async () => {
    await setUp();
    await login();
    for (let i = 0; i < 5; i++) await expect(giveCode(wrongCode())).rejects.toMatchObject({ code: 'incorrect_code' });
    const refused = await giveCode(totp.code()).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: 'rate_limited', message: TOO_MANY_ATTEMPTS });
    // The same account's password is refused the same way now.
    await expect(login()).rejects.toMatchObject({ code: 'rate_limited', message: TOO_MANY_ATTEMPTS });
    // And too many passwords (another account, from another IP) read exactly as too many codes do.
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    const elsewhere = { ...client, ip: '198.51.100.1' };
    for (let i = 0; i < 5; i++) await expect(login({ login: 'bob', password: `wrong ${i}`, client: elsewhere })).rejects.toMatchObject({ code: 'invalid_credentials' });
    const passwords = await login({ login: 'bob', client: elsewhere }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(passwords).toMatchObject({ code: 'rate_limited' });
    expect((passwords as Error).message).toBe((refused as Error).message);
    expect(bob.id).not.toBe(ada.id);
    // Once the window has passed, the login goes through again.
    latchkey.clock.advance(5 * 60 * 1000 + 1000);
    await login();
    expect(await giveCode(totp.code())).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'totp' }] });
  });

  it("forgets the account's failures once the login completes, but not the address's", async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { login_failed: '6/m/ip,5/5m/ip+key,100/d/key' } } });
    await login();
    for (let i = 0; i < 4; i++) await expect(giveCode(wrongCode())).rejects.toMatchObject({ code: 'incorrect_code' });
    expect(await giveCode(totp.code())).toMatchObject({ status: 'authenticated' });
    latchkey.clock.advance(30_000);
    await login();
    // Two more failures fit: the account's four were forgotten (else only one more would), while
    // the address keeps its four, so its sixth in the minute is refused, the right code too.
    for (let i = 0; i < 2; i++) await expect(giveCode(wrongCode())).rejects.toMatchObject({ code: 'incorrect_code' });
    await expect(giveCode(totp.code())).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('counts wrong codes per IP too', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { login_failed: '3/m/ip' } } });
    await login();
    for (let i = 0; i < 3; i++) await expect(giveCode(wrongCode())).rejects.toMatchObject({ code: 'incorrect_code' });
    await expect(giveCode(totp.code())).rejects.toMatchObject({ code: 'rate_limited' });
    expect(await giveCode(totp.code(), { ...client, ip: '198.51.100.1' })).toMatchObject({ status: 'authenticated' });
  });

  it('refuses an account deactivated while it waited for the code, without using the code', async () => {
    await setUp();
    await login();
    await latchkey.deps.store.users.update(ada.id, { isActive: false });
    const code = totp.code();
    expect(await giveCode(code)).toMatchObject({ status: 'inactive' });
    expect(await events(ada, 'authenticator_used')).toEqual([]);
    expect(await login()).toMatchObject({ status: 'inactive' });
    await latchkey.deps.store.users.update(ada.id, { isActive: true });
    expect(await giveCode(code)).toMatchObject({ status: 'authenticated' });
  });

  it('ends the login of a user who no longer exists', async () => {
    await setUp();
    await login();
    await latchkey.deps.store.users.delete(ada.id);
    expect(await giveCode(totp.code())).toEqual({ status: 'ended' });
  });

  it('under mandatory verification, stops an unverified user at verify_email first, without using the code', async () => {
    await setUp({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    await latchkey.database.kysely.updateTable('latchkey_email_addresses').set({ verified: 0 }).where('user_id', '=', ada.id).execute();
    latchkey.mailer.outbox.length = 0;
    expect(await login()).toMatchObject({ status: 'stopped', stage: 'verify_email' });
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    const code = totp.code();
    expect(await giveCode(code)).toMatchObject({ status: 'stopped', stage: 'verify_email' });
    expect(await events(ada, 'authenticator_used')).toEqual([]);
    const [address] = await latchkey.deps.store.emailAddresses.listForUser(ada.id);
    await latchkey.deps.store.emailAddresses.markVerified(address!.id);
    expect(await continueLogin(latchkey.deps, passwordProved(), {}, { client })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    expect(await giveCode(code)).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'totp' }] });
  });

  it('keeps asking for the code after the project stops offering authenticator apps (MFA_SUPPORTED_TYPES)', async () => {
    await setUp();
    // The same database, read by the project with its settings changed.
    const deps = { ...latchkey.deps, settings: { ...latchkey.settings, MFA_SUPPORTED_TYPES: ['recovery_codes' as const] } };
    expect(await loginWithPassword(deps, { login: 'ada', password: PASSWORD, client })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    await expect(continueLogin(deps, pendingLoginState(deps, ada, [PASSWORD_FACTOR]), { code: wrongCode() }, { client })).rejects.toMatchObject({ code: 'incorrect_code' });
    expect(await continueLogin(deps, pendingLoginState(deps, ada, [PASSWORD_FACTOR]), { code: totp.code() }, { client })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'totp' }] });
    expect(await reauthenticateWithCode(deps, { user: ada, code: totp.recoveryCodes[0]!, client })).toBe('recovery_codes');
  });

  it('logs in without a code a user who has no authenticator app', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    expect(await login({ login: 'bob' })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }] });
  });

  describe('trusted browsers (MFA_TRUST_ENABLED)', () => {
    const trusted = { settings: { MFA_TRUST_ENABLED: true } };
    const tokenFor = async (user: User) => trustToken(latchkey.deps, (await latchkey.deps.store.users.findById(user.id))!, await latchkey.deps.store.authenticators.listForUser(user.id));

    it('skips the code stage for a trusted browser (proofs: password, trusted_browser), never the password', async () => {
      await setUp(trusted);
      const mfaTrustToken = await tokenFor(ada);
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'trusted_browser' }] });
      await expect(login({ mfaTrustToken, password: 'wrong password' })).rejects.toMatchObject({ code: 'invalid_credentials' });
      // Without the cookie, or with an altered one, the code is asked for.
      expect(await login()).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
      expect(await login({ mfaTrustToken: `${mfaTrustToken}x` })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
      expect(await login({ mfaTrustToken: 'garbage' })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });

    it('stops trusting after a password change', async () => {
      await setUp(trusted);
      const mfaTrustToken = await tokenFor(ada);
      await latchkey.deps.store.users.update(ada.id, { password: await latchkey.deps.passwords.hash(NEW_PASSWORD) });
      expect(await login({ mfaTrustToken, password: NEW_PASSWORD })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });

    it('stops trusting after the recovery codes are regenerated', async () => {
      await setUp(trusted);
      const mfaTrustToken = await tokenFor(ada);
      await regenerateRecoveryCodes(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() });
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });

    it('stops trusting after the authenticator app is removed and set up again', async () => {
      await setUp(trusted);
      const mfaTrustToken = await tokenFor(ada);
      await deactivateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() });
      await activateTotpFor(latchkey, ada);
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });

    it("does not trust a browser trusted for another user", async () => {
      await setUp(trusted);
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      await activateTotpFor(latchkey, bob);
      const mfaTrustToken = await tokenFor(ada);
      expect(await login({ login: 'bob', mfaTrustToken })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'trusted_browser' }] });
    });

    it('trusts for MFA_TRUST_COOKIE_AGE, and not a second longer', async () => {
      await setUp({ settings: { MFA_TRUST_ENABLED: true, MFA_TRUST_COOKIE_AGE: 3600 } });
      const mfaTrustToken = await tokenFor(ada);
      latchkey.clock.advance(3600 * 1000);
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'trusted_browser' }] });
      latchkey.clock.advance(1000);
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });

    it('expires with the default MFA_TRUST_COOKIE_AGE of 14 days', async () => {
      await setUp(trusted);
      expect(latchkey.settings.MFA_TRUST_COOKIE_AGE).toBe(14 * 86400);
      const mfaTrustToken = await tokenFor(ada);
      latchkey.clock.advance(13 * 86400 * 1000);
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'trusted_browser' }] });
      latchkey.clock.advance(86400 * 1000 + 1000);
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });

    it('never trusts a browser when MFA_TRUST_ENABLED is false', async () => {
      await setUp({ settings: { MFA_TRUST_ENABLED: false } });
      const mfaTrustToken = await tokenFor(ada);
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
      expect(await continueLogin(latchkey.deps, passwordProved(), {}, { client, mfaTrustToken })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });

    it('issues the cookie value through the flow only when the project allows it', async () => {
      await setUp(trusted);
      const mfaTrustToken = await trustThisBrowser(latchkey.deps, ada);
      expect(mfaTrustToken).toEqual(expect.any(String));
      expect(await login({ mfaTrustToken })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'trusted_browser' }] });
      const off = { ...latchkey.deps, settings: { ...latchkey.settings, MFA_TRUST_ENABLED: false } };
      expect(await trustThisBrowser(off, ada)).toBeUndefined();
    });

    it('is off by default', async () => {
      await setUp();
      expect(latchkey.settings.MFA_TRUST_ENABLED).toBe(false);
      expect(await login({ mfaTrustToken: await tokenFor(ada) })).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    });
  });

  describe('reauthentication with a code', () => {
    it('accepts a code from the app or a recovery code, each once', async () => {
      await setUp();
      const code = totp.code();
      expect(await reauthenticateWithCode(latchkey.deps, { user: ada, code, client })).toBe('totp');
      await expect(reauthenticateWithCode(latchkey.deps, { user: ada, code, client })).rejects.toMatchObject({ code: 'incorrect_code' });
      expect(await reauthenticateWithCode(latchkey.deps, { user: ada, code: totp.recoveryCodes[0]!, client })).toBe('recovery_codes');
      expect((await events(ada, 'authenticator_used')).map((record) => record.data).reverse()).toEqual([
        { type: 'totp', purpose: 'reauthenticate' },
        { type: 'recovery_codes', purpose: 'reauthenticate' },
      ]);
      // A code used to reauthenticate cannot then log in.
      await login();
      await expect(giveCode(code)).rejects.toMatchObject({ code: 'incorrect_code' });
    });

    it('refuses a wrong code and records authentication_failed', async () => {
      await setUp();
      await expect(reauthenticateWithCode(latchkey.deps, { user: ada, code: wrongCode(), client })).rejects.toMatchObject({
        code: 'incorrect_code',
        message: INCORRECT_CODE.id,
        param: 'code',
      });
      expect((await events(ada, 'authentication_failed')).map((record) => record.data)).toEqual([{ method: 'mfa', purpose: 'reauthenticate' }]);
    });

    it('refuses a user without an authenticator', async () => {
      await setUp();
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      await expect(reauthenticateWithCode(latchkey.deps, { user: bob, code: totp.code(), client })).rejects.toMatchObject({ code: 'incorrect_code' });
    });

    it('is limited by the reauthenticate rule (10/m/user), shared with the password', async () => {
      await setUp();
      for (let i = 0; i < 9; i++) await expect(reauthenticateWithCode(latchkey.deps, { user: ada, code: wrongCode(), client })).rejects.toMatchObject({ code: 'incorrect_code' });
      await expect(reauthenticate(latchkey.deps, { user: ada, password: 'wrong password', client })).rejects.toMatchObject({ code: 'invalid_credentials' });
      const other = { ...client, ip: '198.51.100.1' };
      await expect(reauthenticateWithCode(latchkey.deps, { user: ada, code: totp.code(), client: other })).rejects.toMatchObject({ code: 'rate_limited' });
      await expect(reauthenticate(latchkey.deps, { user: ada, password: PASSWORD, client })).rejects.toMatchObject({ code: 'rate_limited' });
      latchkey.clock.advance(61_000);
      expect(await reauthenticateWithCode(latchkey.deps, { user: ada, code: totp.code(), client })).toBe('totp');
    });
  });
});
