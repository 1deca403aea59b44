/**
 * The apps-and-media providers through the whole pipeline on the pages, each against the batch's
 * fixture server set to that provider's documented shape (testing/providers/apps-and-media-fixture.ts):
 * a new person signed up (signed in at once when the provider vouches for the address, sent to
 * confirm it when it does not, asked for one when it gives none), the same person signed in to
 * the same account later, consent declined, and the provider failing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { sessionUserOf } from '../../../testing/corp-sso.js';
import { testDatabaseKinds } from '../../../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../../testing/latchkey.js';
import { PageClient } from '../../../testing/pages.js';
import { startAppsFixture, type AppsFixture, type ProviderShape } from '../../../testing/providers/apps-and-media-fixture.js';
import type { RedirectProvider } from '../provider.js';
import { APPS_AND_MEDIA_PROVIDER_KINDS } from './apps-and-media.js';

interface Row {
  /** The row's title: the provider id, and the case when a provider has several rows. */
  title: string;
  type: string;
  shape: ProviderShape;
  /** What the site asks for in the authorization request. */
  scope: string | null;
  uid: string;
  /** The address the person ends up with: given by the provider (verified or not), or typed at signup. */
  email: { address: string; from: 'provider-verified' | 'provider-unverified' | 'signup-form' };
  user: { username?: string; name?: string };
}

const ROWS: Row[] = [
  {
    title: 'discord',
    type: 'discord',
    shape: { clientAuthentication: 'client_secret_post', profile: { id: '80351110224678912', username: 'ada', global_name: 'Ada Lovelace', discriminator: '0', email: 'ada@example.com', verified: true } },
    scope: 'email identify',
    uid: '80351110224678912',
    email: { address: 'ada@example.com', from: 'provider-verified' },
    user: { username: 'ada', name: 'Ada Lovelace' },
  },
  {
    // Discord's unverified address is dropped, not kept unverified: signup asks for one.
    title: 'discord, address not verified at Discord',
    type: 'discord',
    shape: { clientAuthentication: 'client_secret_post', profile: { id: '80351110224678913', username: 'grace', global_name: null, email: 'grace@example.com', verified: false } },
    scope: 'email identify',
    uid: '80351110224678913',
    email: { address: 'grace.typed@example.com', from: 'signup-form' },
    user: { username: 'grace', name: 'grace' },
  },
  {
    title: 'twitch',
    type: 'twitch',
    shape: {
      clientAuthentication: 'client_secret_post',
      tokenErrorShape: 'twitch',
      profileHeaders: { 'Client-Id': 'apps-fixture-client' },
      profile: { data: [{ id: '141981764', login: 'adalive', display_name: 'AdaLive', type: '', broadcaster_type: 'partner', email: 'ada@example.com', created_at: '2016-12-14T20:32:28Z' }] },
    },
    scope: 'user:read:email',
    uid: '141981764',
    email: { address: 'ada@example.com', from: 'provider-unverified' },
    user: { username: 'adalive', name: 'AdaLive' },
  },
  {
    title: 'spotify',
    type: 'spotify',
    shape: { clientAuthentication: 'client_secret_basic', profile: { id: 'wizzler', display_name: 'Ada L', email: 'ada@example.com', country: 'GB', product: 'premium', type: 'user', uri: 'spotify:user:wizzler' } },
    scope: 'user-read-email',
    uid: 'wizzler',
    email: { address: 'ada@example.com', from: 'provider-unverified' },
    user: { name: 'Ada L' },
  },
  {
    title: 'dropbox',
    type: 'dropbox',
    shape: {
      clientAuthentication: 'client_secret_post',
      profileMethod: 'POST',
      profile: { account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc', name: { given_name: 'Ada', surname: 'Lovelace', display_name: 'Ada Lovelace' }, email: 'ada@example.com', email_verified: true, disabled: false },
    },
    scope: null,
    uid: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
    email: { address: 'ada@example.com', from: 'provider-verified' },
    user: { name: 'Ada Lovelace' },
  },
  {
    title: 'zoom',
    type: 'zoom',
    shape: { clientAuthentication: 'client_secret_basic', tokenErrorShape: 'zoom', profile: { id: 'KDcuGIm1QgePTO8WbOqwIQ', first_name: 'Ada', last_name: 'Lovelace', display_name: 'Ada Lovelace', email: 'ada@example.com', type: 1, verified: 1, status: 'active' } },
    scope: null,
    uid: 'KDcuGIm1QgePTO8WbOqwIQ',
    email: { address: 'ada@example.com', from: 'provider-verified' },
    user: { name: 'Ada Lovelace' },
  },
  {
    title: 'notion',
    type: 'notion',
    shape: {
      clientAuthentication: 'client_secret_basic',
      // Notion's token answer names the person; there is no profile endpoint.
      profile: undefined,
      tokenExtras: {
        bot_id: 'b3414d659-1224-5ty7-6ffr-cc9d8773ffff',
        workspace_id: 'j565j4d7x3-2882-61bs-564a-jj9d9ui-c36hxfr7x',
        workspace_name: 'Ada’s Notion',
        workspace_icon: null,
        owner: { type: 'user', user: { object: 'user', id: '6794760a-1f15-45cd-9c65-0dfe42f5135a', name: 'Ada Lovelace', avatar_url: null, type: 'person', person: { email: 'ada@example.com' } } },
        duplicated_template_id: null,
      },
    },
    scope: null,
    uid: 'user-6794760a-1f15-45cd-9c65-0dfe42f5135a_workspace-j565j4d7x3-2882-61bs-564a-jj9d9ui-c36hxfr7x',
    email: { address: 'ada@example.com', from: 'provider-unverified' },
    user: { name: 'Ada Lovelace' },
  },
  {
    title: 'figma',
    type: 'figma',
    shape: { clientAuthentication: 'client_secret_basic', profile: { id: '1234567890', handle: 'Ada Lovelace', img_url: 'https://s3-alpha.figma.com/profile/1234', email: 'ada@example.com' } },
    scope: 'current_user:read',
    uid: '1234567890',
    email: { address: 'ada@example.com', from: 'provider-unverified' },
    user: { name: 'Ada Lovelace' },
  },
  {
    title: 'patreon',
    type: 'patreon',
    shape: {
      clientAuthentication: 'client_secret_post',
      profile: { data: { id: '32187', type: 'user', attributes: { email: 'ada@example.com', full_name: 'Ada Lovelace', first_name: 'Ada', last_name: 'Lovelace', is_email_verified: true, vanity: 'adal' } }, links: { self: 'https://www.patreon.com/api/oauth2/v2/user/32187' } },
    },
    scope: 'identity identity[email] campaigns campaigns.members',
    uid: '32187',
    email: { address: 'ada@example.com', from: 'provider-verified' },
    user: { username: 'adal', name: 'Ada Lovelace' },
  },
  {
    title: 'strava',
    type: 'strava',
    shape: { clientAuthentication: 'client_secret_post', tokenErrorShape: 'strava', profile: { id: 134815, username: 'ada_rides', resource_state: 3, firstname: 'Ada', lastname: 'Lovelace', city: 'London', country: 'United Kingdom' } },
    scope: 'read,activity:read',
    uid: '134815',
    email: { address: 'ada.typed@example.com', from: 'signup-form' },
    user: { username: 'ada_rides', name: 'Ada Lovelace' },
  },
  // The providers that say whether they verified the address, saying they did not: kept, unverified.
  {
    title: 'dropbox, address not verified at Dropbox',
    type: 'dropbox',
    shape: {
      clientAuthentication: 'client_secret_post',
      profileMethod: 'POST',
      profile: { account_id: 'dbid:AAB7uQjqkKrK3VxmMxFg8l2ZbXp1oQxY9zc', name: { given_name: 'Grace', surname: 'Hopper', display_name: 'Grace Hopper' }, email: 'grace@example.com', email_verified: false, disabled: false },
    },
    scope: null,
    uid: 'dbid:AAB7uQjqkKrK3VxmMxFg8l2ZbXp1oQxY9zc',
    email: { address: 'grace@example.com', from: 'provider-unverified' },
    user: { name: 'Grace Hopper' },
  },
  {
    title: 'zoom, address not verified at Zoom (verified 0)',
    type: 'zoom',
    shape: { clientAuthentication: 'client_secret_basic', tokenErrorShape: 'zoom', profile: { id: 'z8yCRlsuQ4mUbVdNxQbLvw', first_name: 'Grace', last_name: 'Hopper', display_name: 'Grace Hopper', email: 'grace@example.com', type: 1, verified: 0, status: 'active' } },
    scope: null,
    uid: 'z8yCRlsuQ4mUbVdNxQbLvw',
    email: { address: 'grace@example.com', from: 'provider-unverified' },
    user: { name: 'Grace Hopper' },
  },
  {
    title: 'patreon, address not verified at Patreon',
    type: 'patreon',
    shape: {
      clientAuthentication: 'client_secret_post',
      profile: { data: { id: '32188', type: 'user', attributes: { email: 'grace@example.com', full_name: 'Grace Hopper', first_name: 'Grace', last_name: 'Hopper', is_email_verified: false, vanity: 'graceh' } }, links: { self: 'https://www.patreon.com/api/oauth2/v2/user/32188' } },
    },
    scope: 'identity identity[email] campaigns campaigns.members',
    uid: '32188',
    email: { address: 'grace@example.com', from: 'provider-unverified' },
    user: { username: 'graceh', name: 'Grace Hopper' },
  },
];

let fixture: AppsFixture;
beforeAll(async () => {
  fixture = await startAppsFixture();
});
afterAll(() => fixture.close());

describe.each(testDatabaseKinds())('the apps-and-media providers on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    fixture.tokenError = false;
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(row: Row): Promise<void> {
    fixture.shape = row.shape;
    const app = { client_id: fixture.clientId, secret: fixture.clientSecret, settings: { authorize_url: fixture.authorizeUrl, access_token_url: fixture.accessTokenUrl, profile_url: fixture.profileUrl } };
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: { [row.type]: { APPS: [app] } } } });
    browser = await PageClient.create(latchkey);
  }

  /** The provider's button, the fixture's consent (or refusal), and the callback: the site's answer. */
  async function signIn(row: Row, client: PageClient, decision: 'allow' | 'deny' | 'fail' = 'allow') {
    const started = await client.post(`/accounts/${row.type}/login/`, {});
    expect(started.statusCode).toBe(302);
    const authorization = new URL(started.headers.location!);
    expect(authorization.searchParams.get('redirect_uri')).toBe(`http://testserver/accounts/${row.type}/login/callback/`);
    expect(authorization.searchParams.get('scope')).toBe(row.scope);
    const callback = await fixture.authorize(authorization.toString(), decision);
    expect(callback.pathname).toBe(`/accounts/${row.type}/login/callback/`);
    return client.get(callback.pathname + callback.search);
  }

  /** Follows the mailed confirmation link for `address`. */
  async function confirm(address: string): Promise<void> {
    const link = /http:\/\/testserver(\/accounts\/confirm-email\/[^/\s]+\/)/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
    expect(link).toBeDefined();
    expect((await browser.post(link!, {})).statusCode).toBe(302);
  }

  describe.each(ROWS)('$title', (row) => {
    it('signs a new person up with the address as the provider vouches for it, and signs them in again to the same account', async () => {
      await setUp(row);
      const first = await signIn(row, browser);
      if (row.email.from === 'provider-verified') {
        expect(first.headers.location).toBe('/');
      } else if (row.email.from === 'provider-unverified') {
        // Under mandatory verification an address the provider did not vouch for is confirmed by mail first.
        expect(first.statusCode).toBe(200);
        expect(first.body).toContain('We have sent an email to verify your address.');
        expect(await sessionUserOf(latchkey, browser)).toBeFalsy();
        // Kept as the provider gave it, unverified, until the mailed link is followed.
        const pending = (await latchkey.deps.store.users.findByEmail(row.email.address))!;
        expect(await latchkey.deps.store.emailAddresses.listForUser(pending.id)).toMatchObject([{ email: row.email.address, verified: false, primary: true }]);
        await confirm(row.email.address);
      } else {
        expect(first.headers.location).toBe('/accounts/3rdparty/signup/');
        const signedUp = await browser.post('/accounts/3rdparty/signup/', { email: row.email.address, username: row.user.username ?? 'someone' });
        expect(signedUp.body).toContain('We have sent an email to verify your address.');
        await confirm(row.email.address);
      }
      const user = (await latchkey.deps.store.users.findByEmail(row.email.address))!;
      expect(user).toMatchObject(row.user);
      expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ email: row.email.address, verified: true, primary: true }]);
      const [account] = await latchkey.deps.store.socialAccounts.listForUser(user.id);
      expect(account).toMatchObject({ provider: row.type, uid: row.uid });
      // No raw token is kept with the account (Notion's profile is its token answer).
      expect(JSON.stringify(account!.extraData)).not.toMatch(/access_token|refresh_token/);

      const later = browser.another();
      expect((await signIn(row, later)).headers.location).toBe('/');
      expect(await sessionUserOf(latchkey, later)).toBe(user.id);
      expect(await latchkey.deps.store.users.count()).toBe(1);
    });

    it('takes a person who declines to the cancelled page, and a failing provider to the error page, signing nobody in', async () => {
      await setUp(row);
      expect((await signIn(row, browser, 'deny')).headers.location).toBe('/accounts/3rdparty/login/cancelled/');
      expect((await browser.get('/accounts/3rdparty/login/cancelled/')).body).toContain('You decided to cancel');

      expect((await signIn(row, browser, 'fail')).headers.location).toBe('/accounts/3rdparty/login/error/');
      fixture.tokenError = true;
      expect((await signIn(row, browser)).headers.location).toBe('/accounts/3rdparty/login/error/');
      expect((await browser.get('/accounts/3rdparty/login/error/')).statusCode).toBe(401);
      expect(await sessionUserOf(latchkey, browser)).toBeFalsy();
      expect(await latchkey.deps.store.users.count()).toBe(0);
    });
  });
});

/** Each provider's endpoints as its docs give them (the page is named at the top of its file). */
const DOCUMENTED: Record<string, { authorize: string; token: string; profile?: string; basic: boolean }> = {
  discord: { authorize: 'https://discord.com/api/oauth2/authorize', token: 'https://discord.com/api/oauth2/token', profile: 'https://discord.com/api/users/@me', basic: false },
  twitch: { authorize: 'https://id.twitch.tv/oauth2/authorize', token: 'https://id.twitch.tv/oauth2/token', profile: 'https://api.twitch.tv/helix/users', basic: false },
  spotify: { authorize: 'https://accounts.spotify.com/authorize', token: 'https://accounts.spotify.com/api/token', profile: 'https://api.spotify.com/v1/me', basic: true },
  dropbox: { authorize: 'https://www.dropbox.com/oauth2/authorize', token: 'https://api.dropboxapi.com/oauth2/token', profile: 'https://api.dropboxapi.com/2/users/get_current_account', basic: false },
  zoom: { authorize: 'https://zoom.us/oauth/authorize', token: 'https://zoom.us/oauth/token', profile: 'https://api.zoom.us/v2/users/me', basic: true },
  notion: { authorize: 'https://api.notion.com/v1/oauth/authorize?owner=user', token: 'https://api.notion.com/v1/oauth/token', basic: true },
  figma: { authorize: 'https://www.figma.com/oauth', token: 'https://api.figma.com/v1/oauth/token', profile: 'https://api.figma.com/v1/me', basic: true },
  patreon: {
    authorize: 'https://www.patreon.com/oauth2/authorize',
    token: 'https://www.patreon.com/api/oauth2/token',
    profile: 'https://www.patreon.com/api/oauth2/v2/identity?fields%5Buser%5D=email,first_name,full_name,is_email_verified,last_name,vanity',
    basic: false,
  },
  strava: { authorize: 'https://www.strava.com/oauth/authorize', token: 'https://www.strava.com/oauth/token', profile: 'https://www.strava.com/api/v3/athlete', basic: false },
};

describe.each(APPS_AND_MEDIA_PROVIDER_KINDS.map((kind) => ({ kind, row: ROWS.find((row) => row.type === kind.id)! })))('$kind.id without endpoint settings', ({ kind, row }) => {
  it("asks the provider's documented endpoints, with its client authentication, the token only in the Authorization header", async () => {
    const documented = DOCUMENTED[kind.id]!;
    const seen: { method: string; url: string; headers: Headers }[] = [];
    // Stands in for the network: the token endpoint and the profile endpoint answer as the fixture does.
    const fakeFetch: typeof fetch = (input, init) => {
      const url = input instanceof Request ? input.url : input.toString();
      seen.push({ method: init?.method ?? 'GET', url, headers: new Headers(init?.headers) });
      const answer = url === documented.token ? { access_token: 'token-1', token_type: 'bearer', ...row.shape.tokenExtras } : row.shape.profile;
      return Promise.resolve(Response.json(answer));
    };
    const app = { provider: kind.id, providerId: '', id: kind.id, name: kind.name, clientId: 'apps-fixture-client', secret: 'its-secret', key: '', settings: {} };
    const provider = kind.build(app, { settings: testSettings(), clock: new ManualClock(), http: { fetch: fakeFetch, timeoutSeconds: 5 } }) as RedirectProvider;
    const redirectUri = `https://site.example/accounts/${kind.id}/login/callback/`;
    const { url, pending } = await provider.authorizationUrl({ redirectUri, state: 'the-state' });
    const expected = new URL(documented.authorize);
    expect(`${url.origin}${url.pathname}`).toBe(`${expected.origin}${expected.pathname}`);
    for (const [name, value] of expected.searchParams) expect(url.searchParams.get(name)).toBe(value);
    expect(url.searchParams.get('scope')).toBe(row.scope);

    const callbackUrl = new URL(`${redirectUri}?code=the-code&state=the-state`);
    const { profile } = await provider.completeAuthorization({ callbackUrl, redirectUri, expectedState: 'the-state', pending });
    expect(profile.uid).toBe(row.uid);
    expect(seen.map((request) => `${request.method} ${request.url}`)).toEqual([`POST ${documented.token}`, ...(documented.profile === undefined ? [] : [`${row.shape.profileMethod ?? 'GET'} ${documented.profile}`])]);
    expect(seen[0]!.headers.get('authorization')?.startsWith('Basic ') ?? false).toBe(documented.basic);
    for (const request of seen.slice(1)) {
      expect(request.headers.get('authorization')).toBe('Bearer token-1');
      expect(request.url).not.toContain('token-1');
      for (const [name, value] of Object.entries(row.shape.profileHeaders ?? {})) expect(request.headers.get(name)).toBe(value);
    }
  });
});
