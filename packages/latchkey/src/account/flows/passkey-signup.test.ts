import { afterEach, describe, expect, it } from 'vitest';
import { isUsablePassword } from '../../account/passwords/index.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { loginWithPasskey } from '../../login/passkey.js';
import { continueLogin, type LoginResult, type PendingLoginState } from '../../login/pipeline.js';
import { webauthnAuthenticationOptions, listWebauthnKeys } from '../../mfa/flows/webauthn.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { SoftwareAuthenticator } from '../../testing/webauthn-authenticator.js';
import { beginPasskeySignup, completePasskeySignup, passkeySignupOptions } from './passkey-signup.js';

const client = { ip: '203.0.113.9', userAgent: 'vitest' };
const ORIGIN = 'http://testserver';
const PASSKEY_SIGNUP: Partial<SettingValues> = {
  MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'],
  MFA_PASSKEY_LOGIN_ENABLED: true,
  MFA_PASSKEY_SIGNUP_ENABLED: true,
  ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true,
};

describe.each(testDatabaseKinds())('passkey signup (the flow) on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Partial<SettingValues> = {}) {
    latchkey = await createTestLatchkey({ kind, settings: { ...PASSKEY_SIGNUP, ...settings } });
  }

  /** The stopped login a door would keep. */
  function pendingOf(result: LoginResult | undefined, stage: string): PendingLoginState {
    expect(result).toMatchObject({ status: 'stopped', stage });
    if (result?.status !== 'stopped') throw new Error('not stopped');
    return result.pending;
  }

  /** The address verified, as the code would, and the login carried on to its next stage. */
  async function verifyAddress(pending: PendingLoginState): Promise<LoginResult> {
    const [address] = await latchkey.deps.store.emailAddresses.listForUser(pending.userId);
    await latchkey.deps.store.emailAddresses.markVerified(address!.id);
    return continueLogin(latchkey.deps, pending, {}, { client });
  }

  it('makes an account without a password, waits for the address, then for the passkey, which signs in and later signs in alone', async () => {
    await setUp();
    const begun = await beginPasskeySignup(latchkey.deps, { email: 'Grace@Example.com', username: 'grace', client });
    expect(begun).toMatchObject({ status: 'verification_sent', email: 'grace@example.com' });
    const atVerification = pendingOf(begun.status === 'verification_sent' ? begun.login : undefined, 'verify_email');
    expect(atVerification.proofs).toEqual([{ kind: 'passkey_signup' }]);
    const grace = (await latchkey.deps.store.users.findById(atVerification.userId))!;
    expect(isUsablePassword(grace.password)).toBe(false);
    // Before the address is verified there are no options to be had.
    await expect(passkeySignupOptions(latchkey.deps, atVerification)).rejects.toMatchObject({ code: 'email_unverified' });

    const atPasskey = pendingOf(await verifyAddress(atVerification), 'mfa_signup_webauthn');
    const { options, ceremony } = await passkeySignupOptions(latchkey.deps, atPasskey);
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const done = await completePasskeySignup(latchkey.deps, atPasskey, { ceremony, credential: authenticator.create(options), name: 'Phone' }, { client });
    expect(done).toMatchObject({ status: 'authenticated', user: { id: grace.id }, proofs: [{ kind: 'passkey_signup' }] });
    const keys = await listWebauthnKeys(latchkey.deps, grace);
    expect(keys.map((key) => ({ name: key.name, passwordless: key.passwordless }))).toEqual([{ name: 'Phone', passwordless: true }]);
    // As allauth's: no recovery codes and no "a key was added" notice for the account just made.
    expect(await latchkey.deps.store.authenticators.findForUser(grace.id, 'recovery_codes')).toBeUndefined();
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).not.toContainEqual(expect.stringContaining('security key was added'));

    const login = await webauthnAuthenticationOptions(latchkey.deps, 'login');
    const again = await loginWithPasskey(latchkey.deps, { client, ceremony: login.ceremony, credential: authenticator.get(login.options) });
    expect(again).toMatchObject({ status: 'authenticated', user: { id: grace.id } });
  });

  it('refuses a key that is not a verified passkey, another ceremony, or a replay, and keeps the login waiting', async () => {
    await setUp();
    const begun = await beginPasskeySignup(latchkey.deps, { email: 'grace@example.com', username: 'grace', client });
    const atPasskey = pendingOf(await verifyAddress(pendingOf(begun.status === 'verification_sent' ? begun.login : undefined, 'verify_email')), 'mfa_signup_webauthn');
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const complete = async (make: (options: Parameters<SoftwareAuthenticator['create']>[0]) => ReturnType<SoftwareAuthenticator['create']>) => {
      const { options, ceremony } = await passkeySignupOptions(latchkey.deps, atPasskey);
      return completePasskeySignup(latchkey.deps, atPasskey, { ceremony, credential: make(options) }, { client });
    };
    await expect(complete((options) => authenticator.create(options, { origin: 'https://evil.example' }))).rejects.toMatchObject({ code: 'incorrect_code' });
    await expect(complete((options) => authenticator.create(options, { rpId: 'evil.example' }))).rejects.toMatchObject({ code: 'incorrect_code' });
    // A ceremony never begun is no ceremony; one answered once (even wrongly) cannot be answered again.
    const { options } = await passkeySignupOptions(latchkey.deps, atPasskey);
    await expect(completePasskeySignup(latchkey.deps, atPasskey, { ceremony: undefined, credential: authenticator.create(options) }, { client })).rejects.toMatchObject({ code: 'incorrect_code' });
    const used = await passkeySignupOptions(latchkey.deps, atPasskey);
    await expect(completePasskeySignup(latchkey.deps, atPasskey, { ceremony: used.ceremony, credential: authenticator.create(used.options, { userVerified: false }) }, { client })).rejects.toMatchObject({ code: 'incorrect_code' });
    await expect(completePasskeySignup(latchkey.deps, atPasskey, { ceremony: used.ceremony, credential: authenticator.create(used.options) }, { client })).rejects.toMatchObject({ code: 'incorrect_code' });
    expect(await latchkey.deps.store.authenticators.listForUser(atPasskey.userId)).toEqual([]);
    const fresh = await passkeySignupOptions(latchkey.deps, atPasskey);
    expect(await completePasskeySignup(latchkey.deps, atPasskey, { ceremony: fresh.ceremony, credential: authenticator.create(fresh.options) }, { client })).toMatchObject({ status: 'authenticated' });
    expect(await latchkey.deps.store.authenticators.listForUser(atPasskey.userId)).toHaveLength(1);
  });

  it("answers a taken address like a new one and mails its owner; follows signup's rules", async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: 'a long enough passphrase', emailVerified: true });
    const taken = await beginPasskeySignup(latchkey.deps, { email: 'ada@example.com', username: 'ada2', client });
    expect(taken).toMatchObject({ status: 'verification_sent', email: 'ada@example.com', mailFailed: false });
    expect(taken).not.toHaveProperty('login');
    expect(latchkey.mailer.outbox.at(-1)).toMatchObject({ to: ['ada@example.com'] });
    await expect(beginPasskeySignup(latchkey.deps, { email: 'grace@example.com', username: 'ada', client })).rejects.toMatchObject({ code: 'username_taken' });
    await expect(beginPasskeySignup(latchkey.deps, { email: 'not an address', username: 'grace', client })).rejects.toMatchObject({ code: 'invalid_email' });
    latchkey.deps.adapter.isOpenForSignup = () => Promise.resolve(false);
    await expect(beginPasskeySignup(latchkey.deps, { email: 'grace@example.com', username: 'grace', client })).rejects.toMatchObject({ code: 'signup_closed' });
  });

  it('is not there unless MFA_PASSKEY_SIGNUP_ENABLED', async () => {
    await setUp({ MFA_PASSKEY_SIGNUP_ENABLED: false });
    await expect(beginPasskeySignup(latchkey.deps, { email: 'grace@example.com', username: 'grace', client })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('gives no passkey options to a login that is not a passkey signup', async () => {
    await setUp();
    const ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: 'a long enough passphrase', emailVerified: true });
    const passwordLogin: PendingLoginState = { userId: ada.id, credentialMark: 'x', proofs: [{ kind: 'password' }] };
    await expect(passkeySignupOptions(latchkey.deps, passwordLogin)).rejects.toMatchObject({ code: 'not_found' });
  });
});
