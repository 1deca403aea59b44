/**
 * Signing in on the headless API with an access token a mobile app got from Facebook's own SDK
 * (auth/provider/token with `access_token`), against the Facebook fixture
 * (testing/providers/networks-fixture.ts): the token is checked with debug_token to be valid and
 * this app's before /me is read, so a token of another app, or one revoked, signs nobody in; the
 * address it gives stays unverified; providers that cannot check a token say so.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { NETWORK_CLIENTS, OTHER_FACEBOOK_APP, startNetworksFixture, type NetworksFixture } from '../../testing/providers/networks-fixture.js';

let fixture: NetworksFixture;
beforeAll(async () => {
  fixture = await startNetworksFixture();
});
afterAll(() => fixture.close());

describe.each(testDatabaseKinds())('headless token sign-in with a Facebook access token on %s', (kind) => {
  let latchkey: TestLatchkey;
  let closeApp: () => Promise<void>;
  let makeClient: (which: 'browser' | 'app') => HeadlessTestClient;
  afterEach(async () => {
    await closeApp();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    const facebook = { client_id: NETWORK_CLIENTS.facebook.id, secret: NETWORK_CLIENTS.facebook.secret, settings: { graph_api_url: `${fixture.base}/fb-graph/v21.0` } };
    const microsoft = { client_id: NETWORK_CLIENTS.microsoft.id, secret: NETWORK_CLIENTS.microsoft.secret, settings: { login_url: `${fixture.base}/ms`, graph_url: `${fixture.base}/graph` } };
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', SOCIALACCOUNT_PROVIDERS: { facebook: { APPS: [facebook] }, microsoft: { APPS: [microsoft] } }, ...settings },
    });
    const app = await HeadlessTestClient.createApp(latchkey);
    closeApp = () => app.close();
    makeClient = (which) => new HeadlessTestClient(app, which, latchkey);
  }

  const tokenBody = (token: Record<string, unknown>, provider = 'facebook') => ({ provider, process: 'login', token: { client_id: NETWORK_CLIENTS.facebook.id, ...token } });

  it('offers Facebook for token sign-in, and Microsoft only by redirect', async () => {
    await setUp();
    const providers = (await makeClient('browser').get('/config')).body.data.socialaccount.providers as { id: string; flows: string[] }[];
    expect(providers).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'facebook', flows: ['provider_redirect', 'provider_token'] }), expect.objectContaining({ id: 'microsoft', flows: ['provider_redirect'] })]),
    );
    // The app client is offered only the providers it can use: those that take a token.
    expect((await makeClient('app').get('/config')).body.data.socialaccount.providers).toEqual([expect.objectContaining({ id: 'facebook' })]);
  });

  it.each(['browser', 'app'] as const)('%s client: signs in with this app’s token, then the same account again, the address unverified', async (which) => {
    await setUp();
    const first = await makeClient(which).post('/auth/provider/token', tokenBody({ access_token: fixture.facebookToken() }));
    expect(first.status).toBe(200);
    expect(first.body.data.user).toMatchObject({ email: 'grace@example.com' });
    expect(first.body.data.methods).toEqual([expect.objectContaining({ method: 'socialaccount', provider: 'facebook', uid: '10158822334455667' })]);
    const grace = (await latchkey.deps.store.users.findByEmail('grace@example.com'))!;
    expect(await latchkey.deps.store.emailAddresses.listForUser(grace.id)).toMatchObject([{ email: 'grace@example.com', verified: false }]);

    const again = await makeClient(which).post('/auth/provider/token', tokenBody({ access_token: fixture.facebookToken() }));
    expect(again.status).toBe(200);
    expect(again.body.data.user.id).toBe(grace.id);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('asks to verify the address first when verification is mandatory', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
    const stopped = await makeClient('app').post('/auth/provider/token', tokenBody({ access_token: fixture.facebookToken() }));
    expect(stopped.status).toBe(401);
    expect(stopped.body.data.flows).toContainEqual(expect.objectContaining({ id: 'verify_email', is_pending: true }));
    expect(stopped.body.meta.is_authenticated).toBe(false);
  });

  it('refuses a token of another app, a revoked or unknown token, an ID token alone, and a provider that takes none', async () => {
    await setUp();
    const api = makeClient('app');
    const refusedAs = async (body: unknown, code: string, param = 'token') => {
      const response = await api.post('/auth/provider/token', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.errors).toEqual([expect.objectContaining({ code, param })]);
    };
    // A real token, for the same person, that Facebook issued to another app.
    await refusedAs(tokenBody({ access_token: fixture.facebookToken(OTHER_FACEBOOK_APP) }), 'invalid_token');
    const revoked = fixture.facebookToken();
    fixture.revoke(revoked);
    await refusedAs(tokenBody({ access_token: revoked }), 'invalid_token');
    await refusedAs(tokenBody({ access_token: 'made-up' }), 'invalid_token');
    await refusedAs(tokenBody({ id_token: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln' }), 'token_required');
    await refusedAs(tokenBody({ access_token: '' }), 'token_required');
    await refusedAs({ provider: 'microsoft', process: 'login', token: { client_id: NETWORK_CLIENTS.microsoft.id, access_token: 'a token' } }, 'token_authentication_not_supported', 'provider');
    expect(await latchkey.deps.store.users.count()).toBe(0);
    expect((await api.get('/auth/session')).status).toBe(401);
    // This app's token still works afterwards.
    expect((await api.post('/auth/provider/token', tokenBody({ access_token: fixture.facebookToken() }))).status).toBe(200);
  });
});
