/**
 * The networks batch (Microsoft, Facebook, X, Reddit) signing people up and in through the pages,
 * each against its fixture (testing/providers/networks-fixture.ts), on every database: a new
 * person (the address kept unverified, as none of these vouches for one, or asked for on the
 * signup form when the provider gives none), a returning person into the same account, a person
 * who declines, a provider that fails. One row per provider.
 */
import { asRedirectProvider } from '../../../testing/redirect-provider.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../../account/users.js';
import type { SettingValues } from '../../../config/settings.js';
import { testDatabaseKinds } from '../../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../../testing/latchkey.js';
import { PageClient } from '../../../testing/pages.js';
import { defaultPeople, NETWORK_CLIENTS, startNetworksFixture, type NetworkProvider, type NetworksFixture } from '../../../testing/providers/networks-fixture.js';
import { appsecretProof, facebookProviderKind } from './facebook.js';
import { microsoftProviderKind } from './microsoft.js';
import { redditProviderKind } from './reddit.js';
import { twitterOAuth2ProviderKind } from './twitter-oauth2.js';

interface Row {
  type: NetworkProvider;
  /** The app's settings pointing it at the fixture (`base`), through each provider's own keys where it has them. */
  settings(base: string): Record<string, unknown>;
  uid: string;
  /** The address the provider gives, never vouched for; undefined when it gives none. */
  email: string | undefined;
}

const PEOPLE = defaultPeople();
const ROWS: Row[] = [
  { type: 'microsoft', settings: (base) => ({ tenant: 'contoso.example', login_url: `${base}/ms`, graph_url: `${base}/graph` }), uid: String(PEOPLE.microsoft.id), email: 'ada@contoso.example' },
  {
    type: 'facebook',
    settings: (base) => ({ version: 'v21.0', authorize_url: `${base}/fb-www/v21.0/dialog/oauth`, graph_api_url: `${base}/fb-graph/v21.0` }),
    uid: String(PEOPLE.facebook.id),
    email: 'grace@example.com',
  },
  {
    type: 'twitter_oauth2',
    settings: (base) => ({ authorize_url: `${base}/x/i/oauth2/authorize`, access_token_url: `${base}/x/2/oauth2/token`, profile_url: `${base}/x/2/users/me` }),
    uid: String(PEOPLE.twitter_oauth2.id),
    email: undefined,
  },
  {
    type: 'reddit',
    settings: (base) => ({
      authorize_url: `${base}/reddit/api/v1/authorize?duration=permanent`,
      access_token_url: `${base}/reddit/api/v1/access_token`,
      profile_url: `${base}/reddit/api/v1/me`,
      user_agent: 'web:latchkey-tests:1.0 (by /u/latchkey)',
    }),
    uid: String(PEOPLE.reddit.name),
    email: undefined,
  },
];

let fixture: NetworksFixture;
beforeAll(async () => {
  fixture = await startNetworksFixture();
});
afterAll(() => fixture.close());

describe.each(testDatabaseKinds())('the networks providers through the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    fixture.failTokens = false;
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(row: Row, settings: Partial<SettingValues> = {}): Promise<void> {
    const client = NETWORK_CLIENTS[row.type];
    latchkey = await createTestLatchkey({
      kind,
      settings: {
        ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
        SOCIALACCOUNT_PROVIDERS: { [row.type]: { APPS: [{ client_id: client.id, secret: client.secret, settings: row.settings(fixture.base) }] } },
        ...settings,
      },
    });
    browser = await PageClient.create(latchkey);
  }

  /** The provider's button, the provider's consent (or refusal), and the callback: the site's answer. */
  async function signIn(row: Row, options: { deny?: boolean; client?: PageClient } = {}) {
    const client = options.client ?? browser;
    const started = await client.post(`/accounts/${row.type}/login/`, {});
    expect(started.statusCode).toBe(302);
    const callback = await fixture.authorize(started.headers.location!, { deny: options.deny ?? false });
    expect(`${callback.origin}${callback.pathname}`).toBe(`http://testserver/accounts/${row.type}/login/callback/`);
    return client.get(callback.pathname + callback.search);
  }

  const sessionUser = async (client = browser) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId;

  it.each(ROWS)('$type signs a new person up, keeping its address unverified (or asking for one)', async (row) => {
    await setUp(row);
    const answer = await signIn(row);
    if (row.email !== undefined) {
      // Mandatory verification: the address is mailed a link before anyone is signed in.
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain('We have sent an email to verify your address.');
      const user = (await latchkey.deps.store.users.findByEmail(row.email))!;
      expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ email: row.email, verified: false, primary: true }]);
      expect(latchkey.mailer.lastTo(row.email)).toBeDefined();
      expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: row.type, uid: row.uid }]);
      expect(await sessionUser()).toBeFalsy();
    } else {
      // No address from the provider: the signup form asks for one, then it is confirmed by mail.
      expect(answer.headers.location).toBe('/accounts/3rdparty/signup/');
      expect(await latchkey.deps.store.users.count()).toBe(0);
      const done = await browser.post('/accounts/3rdparty/signup/', { email: 'someone@example.org', username: 'someone' });
      expect(done.statusCode).toBe(200);
      expect(done.body).toContain('We have sent an email to verify your address.');
      const user = (await latchkey.deps.store.users.findByEmail('someone@example.org'))!;
      expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: row.type, uid: row.uid }]);
    }
  });

  it.each(ROWS)('$type signs a returning person in to the same account', async (row) => {
    await setUp(row);
    const ada = await createUser(latchkey.deps, { username: 'returning', email: 'returning@example.net', password: null, emailVerified: true });
    await latchkey.deps.store.socialAccounts.create({ userId: ada.id, provider: row.type, uid: row.uid, extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
    expect((await signIn(row)).headers.location).toBe('/');
    expect(await sessionUser()).toBe(ada.id);
    const again = browser.another();
    expect((await signIn(row, { client: again })).headers.location).toBe('/');
    expect(await sessionUser(again)).toBe(ada.id);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it.each(ROWS.filter((row) => row.email !== undefined))('$type never signs in to an account by the address it gives, which it does not vouch for', async (row) => {
    // Even with email authentication and auto-connect on: the provider does not vouch for the address.
    await setUp(row, { SOCIALACCOUNT_EMAIL_AUTHENTICATION: true, SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT: true });
    const owner = await createUser(latchkey.deps, { username: 'owner', email: row.email!, password: 'a long enough passphrase', emailVerified: true });
    const answer = await signIn(row);
    expect(answer.headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await sessionUser()).toBeFalsy();
    expect(await latchkey.deps.store.socialAccounts.listForUser(owner.id)).toEqual([]);
  });

  it.each(ROWS)('$type takes a person who declines to the cancelled page', async (row) => {
    await setUp(row);
    expect((await signIn(row, { deny: true })).headers.location).toBe('/accounts/3rdparty/login/cancelled/');
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('facebook reads the person from the app’s profile_url when it gives one, still with the appsecret_proof', async () => {
    const facebook = ROWS.find((row) => row.type === 'facebook')!;
    // No Graph API at graph_api_url: the person can only come from profile_url (another version's /me
    // on the fixture, which answers only with the proof of the token and the app secret).
    await setUp({
      ...facebook,
      settings: (base) => ({
        version: 'v21.0',
        authorize_url: `${base}/fb-www/v21.0/dialog/oauth`,
        access_token_url: `${base}/fb-graph/v21.0/oauth/access_token`,
        graph_api_url: `${base}/no-graph-here`,
        profile_url: `${base}/fb-graph/v22.0/me`,
      }),
    });
    const answer = await signIn(facebook);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('We have sent an email to verify your address.');
    const user = (await latchkey.deps.store.users.findByEmail(facebook.email!))!;
    expect(user).toMatchObject({ name: 'Grace Hopper' });
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: 'facebook', uid: facebook.uid }]);
  });

  it.each(ROWS)('$type takes a failing provider to the error page, signing nobody in', async (row) => {
    await setUp(row);
    fixture.failTokens = true;
    expect((await signIn(row)).headers.location).toBe('/accounts/3rdparty/login/error/');
    expect(await sessionUser()).toBeFalsy();
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });
});

describe("the networks providers' public endpoints, without overrides", () => {
  const context = { settings: {} as never, clock: { now: () => new Date(0) } as never, http: { timeoutSeconds: 5 } };
  const app = (settings: Record<string, unknown>) => ({ id: 'app', provider: 'x', name: 'App', clientId: 'client', secret: 'secret', key: '', settings, hidden: false }) as never;
  const authorizationUrl = async (kind: typeof microsoftProviderKind, settings: Record<string, unknown> = {}) => {
    const provider = kind.build(app(settings), context);
    return (await provider.authorizationUrl({ redirectUri: 'https://site.example/cb', state: 's' })).url;
  };

  it.each([
    { kind: microsoftProviderKind, settings: {}, expected: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize', scope: 'User.Read' },
    { kind: microsoftProviderKind, settings: { tenant: 'contoso.onmicrosoft.com' }, expected: 'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize', scope: 'User.Read' },
    { kind: facebookProviderKind, settings: {}, expected: 'https://www.facebook.com/v19.0/dialog/oauth', scope: 'email public_profile' },
    { kind: facebookProviderKind, settings: { version: 'v21.0' }, expected: 'https://www.facebook.com/v21.0/dialog/oauth', scope: 'email public_profile' },
    { kind: twitterOAuth2ProviderKind, settings: {}, expected: 'https://x.com/i/oauth2/authorize', scope: 'users.read tweet.read' },
    { kind: redditProviderKind, settings: {}, expected: 'https://www.reddit.com/api/v1/authorize', scope: 'identity' },
  ])('$kind.id with $settings sends the browser to $expected', async ({ kind, settings, expected, scope }) => {
    const url = await authorizationUrl(kind, settings);
    expect(`${url.origin}${url.pathname}`).toBe(expected);
    expect(url.searchParams.get('scope')).toBe(scope);
    if (kind === twitterOAuth2ProviderKind) expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    if (kind === redditProviderKind) expect(url.searchParams.get('duration')).toBe('permanent');
  });

  it('facebook asks profile_url, keeping its query, with the fields and the appsecret_proof, for a token a mobile app brings too', async () => {
    const seen: URL[] = [];
    const fakeFetch: typeof fetch = (input) => {
      const url = new URL(input instanceof Request ? input.url : input.toString());
      seen.push(url);
      const answer = url.pathname.endsWith('/debug_token') ? { data: { is_valid: true, app_id: 'client', user_id: '42' } } : { id: '42', name: 'Grace Hopper' };
      return Promise.resolve(Response.json(answer));
    };
    const provider = asRedirectProvider(facebookProviderKind.build(app({ profile_url: 'https://graph-proxy.example/facebook/me?locale=en_GB' }), { ...context, http: { fetch: fakeFetch, timeoutSeconds: 5 } }));
    const profile = await provider.verifyAccessToken!('the-token');
    expect(profile.uid).toBe('42');
    expect(seen.map((url) => `${url.origin}${url.pathname}`)).toEqual(['https://graph.facebook.com/v19.0/debug_token', 'https://graph-proxy.example/facebook/me']);
    expect(Object.fromEntries(seen[1]!.searchParams)).toEqual({ locale: 'en_GB', fields: 'id,email,name,first_name,last_name', appsecret_proof: appsecretProof('the-token', 'secret') });
  });

  it('refuses a tenant or a version that is not one', () => {
    expect(microsoftProviderKind.checkSettings({ tenant: '../evil.example/x?' })).toMatchObject({ key: 'tenant', reason: 'invalid' });
    expect(facebookProviderKind.checkSettings({ version: '19' })).toMatchObject({ key: 'version', reason: 'invalid' });
    expect(redditProviderKind.checkSettings({ user_agent: '' })).toMatchObject({ key: 'user_agent', reason: 'invalid' });
  });
});
