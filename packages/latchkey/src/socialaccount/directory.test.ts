/**
 * The providers people sign in with, as start-up and the directory see them: SOCIALACCOUNT_PROVIDERS
 * checked before anything opens (an unknown provider, settings an OpenID Connect app cannot use),
 * each refusal one line naming the app and the key, from the settings file or the environment; in
 * production, a provider on a loopback or private address unless the operator allows its host; and
 * a stored app whose settings are unusable left out rather than breaking the login page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SettingValues } from '../config/settings.js';
import { isLatchkeyError } from '../core/errors.js';
import { createLatchkey } from '../latchkey.js';
import { createTestLatchkey, PRODUCTION_TEST_ENV, testSettings, type TestLatchkey } from '../testing/latchkey.js';
import { BUILT_IN_PROVIDER_KINDS } from './providers/registry.js';

const corp = { provider_id: 'corp', name: 'Corp SSO', client_id: 'latchkey', secret: 'provider-s3cret', settings: { server_url: 'https://id.corp.example' } };

/** The one line start-up stops with; it stops before opening the database. */
async function refusedStart(options: { settings?: Partial<SettingValues>; env?: Record<string, string> }): Promise<string> {
  const error = await createLatchkey({ settings: testSettings(options) }).then((started) => started.close(), (caught: unknown) => caught);
  if (isLatchkeyError(error, 'configuration_invalid')) return error.message;
  throw new Error(`expected start-up to be refused, got ${String(error)}`);
}

const withSettings = (settings: Record<string, unknown>) => ({ openid_connect: { APPS: [{ ...corp, settings }] } });

describe('start-up with SOCIALACCOUNT_PROVIDERS', () => {
  it.each([
    [{}, `a server_url is required for openid_connect (the identity provider's issuer URL)`],
    [{ server_url: 'http://id.corp.example' }, 'server_url "http://id.corp.example" is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only)'],
    [{ ...corp.settings, scope: 'openid email' }, 'scope must be a list of strings, not a string: write ["openid","email"]'],
    [{ ...corp.settings, auth_params: { prompt: { value: 'login' } } }, 'auth_params.prompt must be a string, not an object'],
    [{ ...corp.settings, uid_field: ['oid'] }, 'uid_field must be a non-empty string, not a list'],
    [{ ...corp.settings, fetch_userinfo: 'true' }, 'fetch_userinfo must be true or false, not a string'],
    [{ ...corp.settings, oauth_pkce_enabled: 0 }, 'oauth_pkce_enabled must be true or false, not a number'],
    [{ ...corp.settings, token_auth_method: 'none' }, 'token_auth_method must be one of "client_secret_basic", "client_secret_post", not "none"'],
  ])('refuses an OpenID Connect app with settings %j, naming the app and the key', async (settings, problem) => {
    const message = await refusedStart({ settings: { SOCIALACCOUNT_PROVIDERS: withSettings(settings) } });
    expect(message).toBe(`SOCIALACCOUNT_PROVIDERS.openid_connect: the app "corp" has unusable settings: ${problem}.`);
    expect(message).not.toContain(corp.secret);
  });

  it('checks the provider-wide settings copied into each app, and the apps of LATCHKEY_SOCIALACCOUNT_PROVIDERS alike', async () => {
    expect(await refusedStart({ settings: { SOCIALACCOUNT_PROVIDERS: { openid_connect: { SCOPE: 'openid', APPS: [corp] } } } })).toBe(
      'SOCIALACCOUNT_PROVIDERS.openid_connect: the app "corp" has unusable settings: scope must be a list of strings, not a string: write ["openid"].',
    );
    const env = { LATCHKEY_SOCIALACCOUNT_PROVIDERS: JSON.stringify(withSettings({ ...corp.settings, fetch_userinfo: 'no' })) };
    expect(await refusedStart({ env })).toBe('SOCIALACCOUNT_PROVIDERS.openid_connect: the app "corp" has unusable settings: fetch_userinfo must be true or false, not a string.');
  });

  it('refuses a provider no kind is registered for, instead of ignoring its apps', async () => {
    expect(await refusedStart({ settings: { SOCIALACCOUNT_PROVIDERS: { 'openid-connect': { APPS: [corp] } } } })).toBe(
      `SOCIALACCOUNT_PROVIDERS.openid-connect: unknown provider "openid-connect"; Latchkey signs in with ${BUILT_IN_PROVIDER_KINDS.map((kind) => kind.id).join(', ')}.`,
    );
    expect(await refusedStart({ settings: { SOCIALACCOUNT_PROVIDERS: { hubgit: { APPS: [{ client_id: 'gh' }] } } } })).toMatch(/^SOCIALACCOUNT_PROVIDERS\.hubgit: unknown provider "hubgit"/);
  });
});


const unlessListed = (host: string) => `which production refuses unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists ${host}`;

describe('start-up in production with a provider on a loopback or private address', () => {
  it.each([
    [{ server_url: 'http://127.0.0.1:6379' }, 'server_url "http://127.0.0.1:6379/"', '127.0.0.1'],
    [{ server_url: 'https://localhost:5432' }, 'server_url "https://localhost:5432/"', 'localhost'],
    [{ server_url: 'https://10.0.0.7/realms/corp' }, 'server_url "https://10.0.0.7/realms/corp"', '10.0.0.7'],
    [{ server_url: 'https://172.20.1.1' }, 'server_url "https://172.20.1.1/"', '172.20.1.1'],
    [{ server_url: 'https://192.168.1.10' }, 'server_url "https://192.168.1.10/"', '192.168.1.10'],
    [{ server_url: 'https://169.254.169.254/latest/meta-data' }, 'server_url "https://169.254.169.254/latest/meta-data"', '169.254.169.254'],
    [{ server_url: 'https://100.64.0.1' }, 'server_url "https://100.64.0.1/"', '100.64.0.1'],
    [{ server_url: 'https://0.0.0.0:6379' }, 'server_url "https://0.0.0.0:6379/"', '0.0.0.0'],
    [{ server_url: 'https://[fd00::1]' }, 'server_url "https://[fd00::1]/"', '[fd00::1]'],
    [{ server_url: 'https://[::ffff:127.0.0.1]:6379' }, 'server_url "https://[::ffff:7f00:1]:6379/"', '[::ffff:7f00:1]'],
    [{ ...corp.settings, access_token_url: 'https://192.168.1.10/token' }, 'access_token_url "https://192.168.1.10/token"', '192.168.1.10'],
    [{ ...corp.settings, jwks_url: 'http://[::1]:8080/jwks' }, 'jwks_url "http://[::1]:8080/jwks"', '[::1]'],
  ])('refuses an OpenID Connect app with settings %j, naming the setting', async (settings, named, host) => {
    const message = await refusedStart({ env: PRODUCTION_TEST_ENV, settings: { SOCIALACCOUNT_PROVIDERS: withSettings(settings) } });
    expect(message).toBe(`SOCIALACCOUNT_PROVIDERS.openid_connect: the app "corp" has unusable settings: ${named} is on a loopback or private address, ${unlessListed(host)}.`);
  });

  it('refuses a named OpenID Connect provider and a SAML metadata URL on one too', async () => {
    const keycloak = { keycloak: { APPS: [{ client_id: 'latchkey', settings: { keycloak_url: 'https://10.1.2.3', keycloak_realm: 'staff' } }] } };
    expect(await refusedStart({ env: PRODUCTION_TEST_ENV, settings: { SOCIALACCOUNT_PROVIDERS: keycloak } })).toBe(
      `SOCIALACCOUNT_PROVIDERS.keycloak: the app "keycloak" has unusable settings: the issuer its settings give "https://10.1.2.3/realms/staff" is on a loopback or private address, ${unlessListed('10.1.2.3')}.`,
    );
    const idp = { entity_id: 'urn:example:idp', metadata_url: 'http://127.0.0.1:8080/metadata' };
    const saml = { saml: { APPS: [{ provider_id: idp.entity_id, client_id: 'acme', settings: { idp } }] } };
    expect(await refusedStart({ env: PRODUCTION_TEST_ENV, settings: { SOCIALACCOUNT_PROVIDERS: saml } })).toBe(
      `SOCIALACCOUNT_PROVIDERS.saml: the app "urn:example:idp" has unusable settings: idp.metadata_url "http://127.0.0.1:8080/metadata" is on a loopback or private address, ${unlessListed('127.0.0.1')}.`,
    );
  });

  it('refuses an allow-list entry that is not a host', () => {
    for (const entry of ['keycloak.internal:8443', 'https://keycloak.internal', '127.1', 'fd00::5']) {
      expect(() => testSettings({ env: { ...PRODUCTION_TEST_ENV, LATCHKEY_SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: entry } }), entry).toThrow(/LATCHKEY_SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST/);
    }
  });
});

describe('start-up with a provider on a loopback or private address that is allowed', () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('starts in production when SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists the host', async () => {
    const settings = { server_url: 'https://keycloak.internal/realms/corp', access_token_url: 'http://127.0.0.1:8080/token', jwks_url: 'https://[fd00::5]/jwks' };
    latchkey = await createTestLatchkey({
      env: { ...PRODUCTION_TEST_ENV, LATCHKEY_SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: 'Keycloak.internal,127.0.0.1,[fd00::5]' },
      settings: { SOCIALACCOUNT_PROVIDERS: withSettings(settings) },
    });
    expect(latchkey.settings.ENVIRONMENT).toBe('production');
    expect((await latchkey.deps.providerDirectory.provider('corp'))?.app.settings).toEqual(settings);
  });

  it('starts outside production with a provider on loopback, as tests and developers run one', async () => {
    latchkey = await createTestLatchkey({ settings: { SOCIALACCOUNT_PROVIDERS: withSettings({ server_url: 'http://127.0.0.1:8080', jwks_url: 'https://10.0.0.7/jwks' }) } });
    expect((await latchkey.deps.providerDirectory.provider('corp'))?.app.clientId).toBe('latchkey');
  });
});

describe('the directory', () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('leaves out a stored app whose settings it cannot use (stored before they were checked), and offers the others', async () => {
    latchkey = await createTestLatchkey({ settings: { SOCIALACCOUNT_PROVIDERS: withSettings(corp.settings) } });
    const row = { provider: 'openid_connect', name: 'Legacy', clientId: 'c', sealedSecret: '', key: '' };
    await latchkey.deps.store.socialApps.create({ ...row, providerId: 'legacy', settings: { server_url: 'https://legacy.example', scope: 'openid email' } });
    await latchkey.deps.store.socialApps.create({ ...row, providerId: 'gone', provider: 'saml', settings: {} });
    const offered = await latchkey.deps.providerDirectory.offered();
    expect(offered.map(({ provider }) => [provider.id, provider.name])).toEqual([['corp', 'Corp SSO']]);
    expect(await latchkey.deps.providerDirectory.provider('legacy')).toBeUndefined();
    expect(await latchkey.deps.providerDirectory.provider('gone')).toBeUndefined();
    expect((await latchkey.deps.providerDirectory.provider('corp'))?.app.clientId).toBe('latchkey');
  });

  it('leaves out, in production, a stored app on a private address (stored before the rule, or before production)', async () => {
    latchkey = await createTestLatchkey({ env: PRODUCTION_TEST_ENV, settings: { SOCIALACCOUNT_PROVIDERS: withSettings(corp.settings) } });
    const row = { provider: 'openid_connect', name: 'Redis', clientId: 'c', sealedSecret: '', key: '' };
    await latchkey.deps.store.socialApps.create({ ...row, providerId: 'redis', settings: { server_url: 'http://127.0.0.1:6379' } });
    expect((await latchkey.deps.providerDirectory.offered()).map(({ provider }) => provider.id)).toEqual(['corp']);
    expect(await latchkey.deps.providerDirectory.provider('redis')).toBeUndefined();
  });
});
