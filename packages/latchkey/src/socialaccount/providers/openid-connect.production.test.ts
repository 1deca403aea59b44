/**
 * The OpenID Connect provider under production settings, where no provider may be on a loopback or
 * private address (private-hosts.ts): the endpoints a discovery document names are held to it as the
 * app's settings are, a host name that resolves to such an address is refused as the connection is
 * made, and a host SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists signs in as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { startHostileOidcServer, type HostileOidcServer } from '../../testing/hostile-oidc-server.js';
import { PRODUCTION_TEST_ENV, testSettings } from '../../testing/latchkey.js';
import { providerError, signInThrough } from '../../testing/provider-outcomes.js';
import type { Store } from '../../store.js';
import { appsFromSettings } from '../apps.js';
import { createProviderDirectory } from '../directory.js';
import { openIdConnectProvider } from './openid-connect.js';
import { providerHostRule } from './private-hosts.js';
import type { ProviderHttp, RedirectProvider } from './provider.js';
import type { HostLookup } from './provider-fetch.js';
import { createProviderRegistry } from './registry.js';

const redirectUri = 'https://testserver/accounts/oidc/hostile/login/callback/';
const unlessListed = (host: string) => `which production refuses unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists ${host}`;

describe('discovery under production settings', () => {
  const production = providerHostRule({ ENVIRONMENT: 'production', SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: [] });
  /** A provider at https://idp.example whose discovery document is `document`, answered by a fetch that reaches no network. */
  function providerDiscovering(document: Record<string, string>, http: Omit<ProviderHttp, 'fetch' | 'timeoutSeconds'>) {
    const answer: typeof fetch = () => Promise.resolve(Response.json(document));
    return openIdConnectProvider({ providerId: 'idp', name: 'IdP', clientId: 'c', secret: 's', settings: { server_url: 'https://idp.example' } }, { fetch: answer, timeoutSeconds: 5, ...http });
  }
  const published = {
    issuer: 'https://idp.example',
    authorization_endpoint: 'https://idp.example/authorize',
    token_endpoint: 'https://idp.example/token',
    userinfo_endpoint: 'https://idp.example/userinfo',
    jwks_uri: 'https://idp.example/jwks',
  };

  it.each([
    ['token_endpoint', 'http://127.0.0.1:6379/token', '127.0.0.1'],
    ['jwks_uri', 'https://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['userinfo_endpoint', 'https://[::ffff:10.0.0.5]/userinfo', '[::ffff:a00:5]'],
    ['authorization_endpoint', 'https://localhost:8443/authorize', 'localhost'],
  ])('refuses a document whose %s is %s', async (name, url, host) => {
    const error = await providerError(providerDiscovering({ ...published, [name]: url }, { hostRule: production }).authorizationUrl({ redirectUri, state: 's' }));
    expect(error.message).toBe(
      `idp: OpenID Connect discovery at https://idp.example/.well-known/openid-configuration has ${name} ${JSON.stringify(new URL(url).href)}: it is on a loopback or private address, ${unlessListed(host)}`,
    );
  });

  it('takes such a document when the host is listed, and anywhere outside production', async () => {
    const onLoopback = { ...published, token_endpoint: 'http://127.0.0.1:6379/token' };
    const listed = providerHostRule({ ENVIRONMENT: 'production', SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: ['127.0.0.1'] });
    expect((await providerDiscovering(onLoopback, { hostRule: listed }).authorizationUrl({ redirectUri, state: 's' })).url.origin).toBe('https://idp.example');
    expect((await providerDiscovering(onLoopback, {}).authorizationUrl({ redirectUri, state: 's' })).url.origin).toBe('https://idp.example');
  });
});

describe('the directory’s providers under production settings', () => {
  let hostile: HostileOidcServer;
  const clock = new ManualClock();
  beforeAll(async () => {
    hostile = await startHostileOidcServer();
    hostile.clock = clock;
  });
  afterAll(async () => {
    await hostile?.close();
  });

  /** The directory of a production site with one OpenID Connect app at `serverUrl`; `lookup` resolves host names for its connections. */
  function productionDirectory(serverUrl: string, options: { allowlist?: string; lookup?: HostLookup } = {}) {
    const allowlist: Record<string, string> = options.allowlist === undefined ? {} : { LATCHKEY_SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: options.allowlist };
    const settings = testSettings({ env: { ...PRODUCTION_TEST_ENV, ...allowlist } });
    const apps = appsFromSettings({ openid_connect: { APPS: [{ provider_id: 'hostile', client_id: hostile.clientId, secret: hostile.clientSecret, settings: { server_url: serverUrl } }] } });
    // No stored apps: the settings' one is all these tests need.
    const store = { socialApps: { list: () => Promise.resolve([]) } } as unknown as Pick<Store, 'socialApps'>;
    return createProviderDirectory({ settings, clock, store, settingsApps: apps, registry: createProviderRegistry() }, options.lookup ? { lookup: options.lookup } : {});
  }
  async function providerOf(serverUrl: string, options: { allowlist?: string; lookup?: HostLookup } = {}): Promise<RedirectProvider | undefined> {
    return (await productionDirectory(serverUrl, options).provider('hostile'))?.provider as RedirectProvider | undefined;
  }
  /** A resolver under which every name is 127.0.0.1, where the hostile provider listens. */
  const everythingIsLoopback: HostLookup = (_hostname, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
  const follow = (url: URL) => hostile.followAuthorization(url);

  it('refuses to connect to a host name that resolves to a loopback address', async () => {
    const port = new URL(hostile.issuer).port;
    const provider = await providerOf(`https://idp.example:${port}`, { lookup: everythingIsLoopback });
    const error = await providerError(provider!.authorizationUrl({ redirectUri, state: 's' }));
    expect(error.message).toContain(`idp.example resolves to 127.0.0.1, a loopback or private address, ${unlessListed('idp.example')}`);
  });

  it('leaves out an app on a loopback name or address', async () => {
    const port = new URL(hostile.issuer).port;
    expect(await providerOf(`http://localhost:${port}`)).toBeUndefined();
    expect(await providerOf(hostile.issuer)).toBeUndefined();
  });

  it('signs in through a provider whose host SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists', async () => {
    const provider = await providerOf(hostile.issuer, { allowlist: '127.0.0.1' });
    const { profile } = await signInThrough(provider!, redirectUri, follow);
    expect(profile.uid).toBe('hostile-user');
    expect((await provider!.verifyIdToken!(await hostile.mintIdToken())).uid).toBe('hostile-user');
  });
});
