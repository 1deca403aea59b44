import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { loginWithPasskey } from '../../login/passkey.js';
import { loginWithPassword } from '../../login/password.js';
import { continueLogin } from '../../login/pipeline.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { addWebauthnKeyFor } from '../../testing/mfa.js';
import { SoftwareAuthenticator } from '../../testing/webauthn-authenticator.js';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { reauthenticateWithWebauthn } from './authenticate.js';
import { mfaOverview } from './manage.js';
import { viewRecoveryCodes } from './recovery-codes.js';
import { addWebauthnKey, listWebauthnKeys, removeWebauthnKeys, renameWebauthnKey, webauthnAuthenticationOptions, webauthnRegistrationOptions } from './webauthn.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };
const ORIGIN = 'http://testserver';

describe.each(testDatabaseKinds())('passkeys and security keys (WebAuthn) on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Record<string, unknown> = {}) {
    latchkey = await createTestLatchkey({ kind, settings: { MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'], MFA_PASSKEY_LOGIN_ENABLED: true, ...settings } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  const events = async (user: User) => (await latchkey.deps.store.auditLog.listForUser(user.id)).map((record) => ({ event: record.event, data: record.data }));

  async function passkeyLogin(authenticator: SoftwareAuthenticator, overrides: Parameters<SoftwareAuthenticator['get']>[1] = {}) {
    const { options, ceremony } = await webauthnAuthenticationOptions(latchkey.deps, 'login');
    return loginWithPasskey(latchkey.deps, { client, ceremony, credential: authenticator.get(options, overrides) });
  }

  it('adds a passkey with recovery codes, signs in with it alone as both factors, and keeps its counter', async () => {
    await setUp();
    const { authenticator, authenticatorId } = await addWebauthnKeyFor(latchkey, ada, { name: 'Laptop' });
    const overview = await mfaOverview(latchkey.deps, ada);
    expect(overview.webauthn).toMatchObject([{ name: 'Laptop', passwordless: true, authenticator: { id: authenticatorId } }]);
    expect(overview.recoveryCodes).toBeDefined();
    expect((await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now() })).unused).toHaveLength(10);
    // The handle the key was made for is random, not the user's id.
    const [key] = await listWebauthnKeys(latchkey.deps, ada);
    expect(isoBase64URL.toUTF8String(key!.userHandle)).not.toBe(String(ada.id));
    expect(key!.userHandle.length).toBeGreaterThanOrEqual(40);

    const result = await passkeyLogin(authenticator);
    expect(result).toMatchObject({ status: 'authenticated', user: { id: ada.id }, proofs: [{ kind: 'passkey', authenticatorId }] });
    const [used] = await listWebauthnKeys(latchkey.deps, ada);
    expect(used!.counter).toBe(1);
    expect(used!.authenticator.lastUsedAt).toEqual(latchkey.clock.now());
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toContainEqual(expect.stringContaining('A security key was added to your account'));
  });

  it('asks a password login for the security key as second factor, and accepts its assertion', async () => {
    await setUp();
    const { authenticator } = await addWebauthnKeyFor(latchkey, ada, { passwordless: false });
    const stopped = await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, client });
    expect(stopped).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
    if (stopped.status !== 'stopped') return;
    const { options, ceremony } = await webauthnAuthenticationOptions(latchkey.deps, 'authenticate', ada);
    expect(options.allowCredentials).toHaveLength(1);
    const done = await continueLogin(latchkey.deps, stopped.pending, { webauthn: { ceremony, credential: authenticator.get(options) } }, { client });
    expect(done).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'webauthn' }] });
  });

  it('refuses an assertion from another origin, for another relying party, or without user verification at a passkey login', async () => {
    await setUp();
    const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
    await expect(passkeyLogin(authenticator, { origin: 'https://evil.example' })).rejects.toMatchObject({ code: 'incorrect_code' });
    await expect(passkeyLogin(authenticator, { rpId: 'evil.example' })).rejects.toMatchObject({ code: 'incorrect_code' });
    await expect(passkeyLogin(authenticator, { userVerified: false })).rejects.toMatchObject({ code: 'incorrect_code' });
    expect(await passkeyLogin(authenticator)).toMatchObject({ status: 'authenticated' });
  });

  it('refuses a registration made for another origin or relying party, and stores nothing', async () => {
    await setUp();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    for (const overrides of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }]) {
      const { options, ceremony } = await webauthnRegistrationOptions(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now(), passwordless: true });
      const credential = authenticator.create(options, overrides);
      await expect(addWebauthnKey(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now(), ceremony, credential })).rejects.toMatchObject({ code: 'incorrect_code' });
    }
    expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);
  });

  it('refuses a replayed challenge, an expired one, and one begun for another purpose', async () => {
    await setUp();
    const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
    const { options, ceremony } = await webauthnAuthenticationOptions(latchkey.deps, 'login');
    const credential = authenticator.get(options);
    expect(await loginWithPasskey(latchkey.deps, { client, ceremony, credential })).toMatchObject({ status: 'authenticated' });
    await expect(loginWithPasskey(latchkey.deps, { client, ceremony, credential })).rejects.toMatchObject({ code: 'incorrect_code' });

    const late = await webauthnAuthenticationOptions(latchkey.deps, 'login');
    latchkey.clock.advance(301_000);
    await expect(loginWithPasskey(latchkey.deps, { client, ceremony: late.ceremony, credential: authenticator.get(late.options) })).rejects.toMatchObject({ code: 'incorrect_code' });

    const secondFactor = await webauthnAuthenticationOptions(latchkey.deps, 'authenticate', ada);
    await expect(loginWithPasskey(latchkey.deps, { client, ceremony: secondFactor.ceremony, credential: authenticator.get(secondFactor.options) })).rejects.toMatchObject({ code: 'incorrect_code' });
  });

  it('refuses a cloned key whose counter went back, and records it', async () => {
    await setUp();
    const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
    expect(await passkeyLogin(authenticator, { counter: 5 })).toMatchObject({ status: 'authenticated' });
    await expect(passkeyLogin(authenticator, { counter: 3 })).rejects.toMatchObject({ code: 'incorrect_code' });
    expect(await events(ada)).toContainEqual({ event: 'authentication_failed', data: expect.objectContaining({ method: 'webauthn', reason: 'sign_count' }) });
    expect((await listWebauthnKeys(latchkey.deps, ada))[0]!.counter).toBe(5);
  });

  it("refuses another user's key for a user's second factor or reauthentication", async () => {
    await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    await addWebauthnKeyFor(latchkey, ada, { passwordless: false });
    const bobs = await addWebauthnKeyFor(latchkey, bob, { passwordless: false });
    const { options, ceremony } = await webauthnAuthenticationOptions(latchkey.deps, 'reauthenticate', ada);
    const answer = { ceremony, credential: bobs.authenticator.get(options, { credentialId: bobs.credentialId }) };
    await expect(reauthenticateWithWebauthn(latchkey.deps, { user: ada, answer, client })).rejects.toMatchObject({ code: 'incorrect_code' });
  });

  it('signs in no inactive user by passkey', async () => {
    await setUp();
    const { authenticator } = await addWebauthnKeyFor(latchkey, ada);
    await latchkey.deps.store.users.update(ada.id, { isActive: false });
    expect(await passkeyLogin(authenticator)).toMatchObject({ status: 'inactive' });
  });

  it('refuses passkey login when the project has not turned it on', async () => {
    await setUp({ MFA_PASSKEY_LOGIN_ENABLED: false });
    await expect(webauthnAuthenticationOptions(latchkey.deps, 'login')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps a key imported from allauth working: public key from its attestation, the user id as its handle', async () => {
    await setUp();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { options } = await webauthnRegistrationOptions(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now(), passwordless: true });
    const credential = authenticator.create({ ...options, user: { ...options.user, id: isoBase64URL.fromUTF8String(String(ada.id)) } });
    // allauth's Authenticator.data: the name and the registration response, nothing else.
    await latchkey.deps.store.authenticators.create({ userId: ada.id, type: 'webauthn', data: { name: 'From allauth', credential }, credentialId: credential.id, createdAt: latchkey.clock.now() });
    expect(await passkeyLogin(authenticator)).toMatchObject({ status: 'authenticated', user: { id: ada.id } });
  });

  it('gives the options for a new key only after a recent reauthentication, and to a verified address first', async () => {
    await setUp();
    const stale = new Date(latchkey.clock.now().getTime() - 3600_000);
    await expect(webauthnRegistrationOptions(latchkey.deps, { user: ada, lastAuthenticatedAt: stale, passwordless: true })).rejects.toMatchObject({ code: 'reauthentication_required' });
    await expect(webauthnRegistrationOptions(latchkey.deps, { user: ada, lastAuthenticatedAt: undefined, passwordless: false })).rejects.toMatchObject({ code: 'reauthentication_required' });
    const eve = await createUser(latchkey.deps, { username: 'eve', email: 'eve@example.com', password: PASSWORD, emailVerified: false });
    await expect(webauthnRegistrationOptions(latchkey.deps, { user: eve, lastAuthenticatedAt: stale, passwordless: true })).rejects.toMatchObject({ code: 'email_unverified' });
    const { options } = await webauthnRegistrationOptions(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now(), passwordless: true });
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
  });

  it('renames a key and removes keys (the recovery codes with the last), each needing a recent reauthentication', async () => {
    await setUp();
    const first = await addWebauthnKeyFor(latchkey, ada, { name: 'One' });
    const second = await addWebauthnKeyFor(latchkey, ada, { name: 'Two', authenticator: first.authenticator });
    const stale = new Date(latchkey.clock.now().getTime() - 3600_000);
    await expect(renameWebauthnKey(latchkey.deps, { user: ada, lastAuthenticatedAt: stale, id: first.authenticatorId, name: 'Stolen' })).rejects.toMatchObject({ code: 'reauthentication_required' });
    expect((await listWebauthnKeys(latchkey.deps, ada)).map((key) => key.name)).toEqual(['One', 'Two']);
    expect((await renameWebauthnKey(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now(), id: first.authenticatorId, name: '  Yubikey  ' })).name).toBe('Yubikey');
    await expect(removeWebauthnKeys(latchkey.deps, { user: ada, client, lastAuthenticatedAt: stale, ids: [first.authenticatorId] })).rejects.toMatchObject({ code: 'reauthentication_required' });
    await removeWebauthnKeys(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now(), ids: [first.authenticatorId] });
    expect((await latchkey.deps.store.authenticators.listForUser(ada.id)).map((authenticator) => authenticator.type).sort()).toEqual(['recovery_codes', 'webauthn']);
    await removeWebauthnKeys(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now(), ids: [second.authenticatorId] });
    expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);
  });

  it("refuses to rename or remove another user's key, and removes nothing of a list holding one", async () => {
    await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    const adas = await addWebauthnKeyFor(latchkey, ada);
    const bobs = await addWebauthnKeyFor(latchkey, bob);
    await expect(renameWebauthnKey(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now(), id: bobs.authenticatorId, name: 'Mine' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(removeWebauthnKeys(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now(), ids: [adas.authenticatorId, bobs.authenticatorId] })).rejects.toMatchObject({ code: 'not_found' });
    expect(await listWebauthnKeys(latchkey.deps, ada)).toHaveLength(1);
    expect(await listWebauthnKeys(latchkey.deps, bob)).toHaveLength(1);
  });
});
