/**
 * The rules of stored provider apps that the admin's pages and the CLI's tests do not reach
 * through their doors: who may manage them, collisions on a change, a secret that no longer
 * opens, and what the audit trail records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { LatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestKeyPair } from '../../testing/saml-keys.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { openAppSecret } from '../directory.js';
import type { User } from '../../account/model.js';
import { addSocialApp, changeSocialApp, listSocialApps, MANAGEMENT_COMMAND, removeSocialApp, type SocialAppFields, type StaffActor } from './manage-apps.js';

const CLIENT = { ip: '203.0.113.7', userAgent: 'test' };
const SECRET = 'sup3r-s3cret-client-value';
const corp: SocialAppFields = { provider: 'openid_connect', providerId: 'corp', name: 'Corp SSO', clientId: 'abc', key: '', settings: { server_url: 'https://id.corp.example' } };

describe.each(testDatabaseKinds())('managing stored social apps on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings });
  }

  const person = (username: string, roles: { isStaff?: boolean; isSuperuser?: boolean } = {}) =>
    createUser(latchkey.deps, { username, email: `${username}@example.com`, password: null, emailVerified: true, ...roles });
  /** A staff member in the admin who signed in just now. */
  const signedInNow = (user: User): StaffActor => ({ user, lastAuthenticatedAt: latchkey.deps.clock.now() });

  async function refusal(work: Promise<unknown>): Promise<LatchkeyError> {
    const error = await work.then(() => undefined, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(LatchkeyError);
    return error as LatchkeyError;
  }

  it('lets a superuser, staff with the permission for the action and the management command manage apps; nobody else', async () => {
    await setUp();
    const root = signedInNow(await person('root', { isStaff: true, isSuperuser: true }));
    const clerk = signedInNow(await person('clerk', { isStaff: true }));
    const ada = signedInNow(await person('ada', { isSuperuser: true }));
    for (const actor of [clerk, ada]) {
      expect(await refusal(addSocialApp(latchkey.deps, actor, { ...corp, secret: SECRET }, CLIENT))).toMatchObject({ code: 'permission_denied' });
    }
    const app = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, secret: SECRET }, CLIENT);
    expect(app).not.toHaveProperty('sealedSecret');
    await setAdminPermissions(latchkey.deps, root.user, clerk.user, [{ model: 'socialaccount.socialapp', action: 'change' }], CLIENT);
    expect((await changeSocialApp(latchkey.deps, clerk, app.id, { ...corp, name: 'Corp', secret: undefined }, CLIENT)).changed).toEqual(['name']);
    expect(await refusal(removeSocialApp(latchkey.deps, clerk, app.id, CLIENT))).toMatchObject({ code: 'permission_denied' });
    expect(await removeSocialApp(latchkey.deps, root, app.id, CLIENT)).toMatchObject({ id: app.id, name: 'Corp', hasSecret: true });
    expect(await refusal(removeSocialApp(latchkey.deps, root, app.id, CLIENT))).toMatchObject({ code: 'not_found' });

    // The command's entries have no user; the admin's are the staff member's. No secret in either.
    const records = [...(await latchkey.deps.store.auditLog.listForUser(clerk.user.id, 10)), ...(await latchkey.deps.store.auditLog.listForUser(root.user.id, 10))];
    expect(records.filter((record) => record.event.startsWith('social_app_')).map((record) => [record.event, record.data])).toEqual(
      expect.arrayContaining([
        ['social_app_changed', { provider: 'openid_connect', provider_id: 'corp', changed: ['name'] }],
        ['social_app_removed', { provider: 'openid_connect', provider_id: 'corp' }],
      ]),
    );
    expect(JSON.stringify(records)).not.toContain(SECRET);
  });

  it('refuses to move an app onto an id sign-in could not tell apart from a settings app, unless hidden', async () => {
    const okta = { provider_id: 'okta', client_id: 'x', settings: { server_url: 'https://okta.example' } };
    await setUp({ SOCIALACCOUNT_PROVIDERS: { openid_connect: { APPS: [okta] } } });
    const app = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, secret: SECRET }, CLIENT);
    const ambiguous = await refusal(changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...corp, providerId: 'okta', secret: undefined }, CLIENT));
    expect(ambiguous).toMatchObject({ code: 'social_app_exists', param: 'provider_id', reason: 'ambiguous' });
    const moved = await changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...corp, providerId: 'okta', settings: { ...corp.settings as object, hidden: true }, secret: undefined }, CLIENT);
    expect(moved.changed).toEqual(['provider_id', 'settings']);
    const [row] = await latchkey.deps.store.socialApps.list();
    expect(openAppSecret(latchkey.settings.SECRET_KEY, row!)).toBe(SECRET);
    expect((await listSocialApps(latchkey.deps)).fromSettings).toEqual([expect.objectContaining({ providerId: 'okta', hasSecret: false })]);
  });

  it('asks for the secret again to move an app whose stored secret no longer opens', async () => {
    await setUp();
    const app = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, secret: SECRET }, CLIENT);
    const other = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, providerId: 'other', secret: SECRET }, CLIENT);
    // A secret copied from another app's row: bound to that app, it does not open here.
    await latchkey.deps.store.socialApps.update(app.id, { sealedSecret: (await latchkey.deps.store.socialApps.findById(other.id))!.sealedSecret });
    const unreadable = await refusal(changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...corp, providerId: 'corp-2', secret: undefined }, CLIENT));
    expect(unreadable).toMatchObject({ code: 'invalid_input', param: 'secret', reason: 'unreadable' });
    expect((await latchkey.deps.store.socialApps.findById(app.id))!.providerId).toBe('corp');
    // Typed again, it is stored for the new id; a rename alone keeps the stored one as it is.
    expect((await changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...corp, name: 'Corp', secret: undefined }, CLIENT)).changed).toEqual(['name']);
    const retyped = await changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...corp, providerId: 'corp-2', secret: SECRET }, CLIENT);
    expect(retyped.changed).toEqual(['provider_id', 'name', 'secret']);
    expect(openAppSecret(latchkey.settings.SECRET_KEY, (await latchkey.deps.store.socialApps.findById(app.id))!)).toBe(SECRET);
  });

  it('names the field of every refusal', async () => {
    await setUp();
    const cases: Array<[Partial<SocialAppFields> & { secret?: string }, string, string]> = [
      [{ provider: '' }, 'provider', 'required'],
      [{ provider: 'no_such_provider' }, 'provider', 'unknown'],
      [{ providerId: '' }, 'provider_id', 'provider_id_required'],
      [{ providerId: 'a b' }, 'provider_id', 'entry'],
      [{ name: 'n'.repeat(41) }, 'name', 'entry'],
      [{ clientId: '' }, 'client_id', 'entry'],
      [{ key: 'k'.repeat(192) }, 'key', 'entry'],
      [{ secret: 's'.repeat(8193) }, 'secret', 'entry'],
      [{ settings: [] }, 'settings', 'not_an_object'],
      [{ provider: 'dummy' }, 'provider', 'unknown'],
      [{ settings: { server_url: 'ftp://id.example' } }, 'settings', 'invalid_setting'],
      [{ settings: { scope: ['openid'] } }, 'settings', 'server_url_required'],
      [{ settings: { server_url: 'https://id.example', scope: 'openid email' } }, 'settings', 'invalid_setting'],
      [{ settings: { server_url: 'https://id.example', hidden: 'true' } }, 'settings', 'invalid_setting'],
    ];
    for (const [changes, param, reason] of cases) {
      const error = await refusal(addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, secret: SECRET, ...changes }, CLIENT));
      expect(error, JSON.stringify(changes).slice(0, 80)).toMatchObject({ code: 'invalid_input', param, reason });
      expect(error.message).not.toContain('s'.repeat(100));
    }
    expect(await latchkey.deps.store.socialApps.list()).toEqual([]);
  });

  it('checks settings as start-up does, with the same words, on adding and on changing', async () => {
    await setUp();
    const scope = { server_url: 'https://id.corp.example', scope: 'openid email' };
    const added = await refusal(addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, settings: scope, secret: SECRET }, CLIENT));
    expect(added.message).toBe('scope must be a list of strings, not a string: write ["openid","email"].');
    const missing = await refusal(addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, settings: {}, secret: SECRET }, CLIENT));
    expect(missing.message).toBe("A server_url is required for openid_connect (the identity provider's issuer URL).");
    const app = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...corp, secret: SECRET }, CLIENT);
    const changed = await refusal(changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...corp, settings: { ...scope, scope: ['openid'], uid_field: 7 }, secret: undefined }, CLIENT));
    expect(changed).toMatchObject({ code: 'invalid_input', param: 'settings', reason: 'invalid_setting', message: 'uid_field must be a non-empty string, not a number.' });
    expect((await latchkey.deps.store.socialApps.findById(app.id))!.settings).toEqual(corp.settings);
  });

  it("keeps a SAML app's private key in its sealed secret: a change that keeps the secret passes, clearing it is refused", async () => {
    await setUp();
    const sp = createTestKeyPair('sp.flow.example');
    const acme: SocialAppFields = {
      provider: 'saml',
      providerId: 'https://idp.acme.example/saml',
      name: 'Acme',
      clientId: 'acme',
      key: '',
      settings: { idp: { entity_id: 'https://idp.acme.example/saml', metadata_url: 'https://idp.acme.example/saml/metadata' }, advanced: { x509cert: sp.certificate, authn_request_signed: true } },
    };
    const app = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...acme, secret: sp.privateKey }, CLIENT);
    expect((await changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...acme, name: 'Acme Corp', secret: undefined }, CLIENT)).changed).toEqual(['name']);
    const cleared = await refusal(changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...acme, secret: '' }, CLIENT));
    expect(cleared.message).toBe("advanced.x509cert needs the service provider's private key: the app's secret, or advanced.private_key.");
    // In the settings the key would be stored, and shown in the admin, in clear.
    const inSettings = { ...acme, settings: { ...(acme.settings as object), advanced: { x509cert: sp.certificate, private_key: sp.privateKey } } };
    const stored = await refusal(changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...inSettings, secret: '' }, CLIENT));
    expect(stored).toMatchObject({ param: 'settings', message: "advanced.private_key would be stored unencrypted: give the service provider's private key as the app's secret, which is sealed." });
    expect(JSON.stringify(await latchkey.deps.store.socialApps.list())).not.toContain('PRIVATE KEY');
    const row = (await latchkey.deps.store.socialApps.findById(app.id))!;
    expect(openAppSecret(latchkey.settings.SECRET_KEY, row)).toBe(sp.privateKey);
    // The provider is built from the stored row, its key opened from the secret.
    const provider = (await latchkey.deps.providerDirectory.samlProvider('acme'))?.provider;
    expect(provider?.protocol === 'saml' ? provider.saml.metadata() : undefined).toContain('<ds:X509Certificate>');
  });

  it('sets, replaces or clears a secret for a staff member only after a recent sign-in; other changes and the command need none', async () => {
    await setUp();
    const root = await person('root', { isStaff: true, isSuperuser: true });
    const stale: StaffActor = { user: root, lastAuthenticatedAt: new Date(latchkey.deps.clock.now().getTime() - 60 * 60 * 1000) };
    expect(await refusal(addSocialApp(latchkey.deps, stale, { ...corp, secret: SECRET }, CLIENT))).toMatchObject({ code: 'reauthentication_required' });
    expect(await latchkey.deps.store.socialApps.list()).toEqual([]);

    // A public client (no secret), and a name change, are no reason to ask again.
    const app = await addSocialApp(latchkey.deps, stale, { ...corp, secret: '' }, CLIENT);
    expect((await changeSocialApp(latchkey.deps, stale, app.id, { ...corp, name: 'Corp', secret: undefined }, CLIENT)).changed).toEqual(['name']);
    expect(await refusal(changeSocialApp(latchkey.deps, stale, app.id, { ...corp, secret: SECRET }, CLIENT))).toMatchObject({ code: 'reauthentication_required' });
    expect((await latchkey.deps.store.socialApps.findById(app.id))!.sealedSecret).toBe('');

    expect((await changeSocialApp(latchkey.deps, signedInNow(root), app.id, { ...corp, secret: SECRET }, CLIENT)).changed).toEqual(['name', 'secret']);
    expect(await refusal(changeSocialApp(latchkey.deps, stale, app.id, { ...corp, secret: '' }, CLIENT))).toMatchObject({ code: 'reauthentication_required' });
    expect((await latchkey.deps.store.socialApps.findById(app.id))!.sealedSecret).not.toBe('');
    expect((await changeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, app.id, { ...corp, secret: '' }, CLIENT)).changed).toEqual(['secret']);
  });
});
