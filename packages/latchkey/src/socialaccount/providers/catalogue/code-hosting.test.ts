/**
 * The code-hosting providers (GitHub, GitLab, Bitbucket, Stack Exchange, Atlassian) through the
 * whole pipeline on the pages, each against its fixture (testing/providers/code-hosting-fixture.ts),
 * on both databases: a new person signed up (signed in at once when the provider vouches for the
 * address, sent to confirm it when it does not, to the signup form when it gives none), a returning
 * person signed in to the same account, a declined consent, and a provider error.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SettingValues } from '../../../config/settings.js';
import { ManualClock } from '../../../core/clock.js';
import { testDatabaseKinds } from '../../../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../../testing/latchkey.js';
import { PageClient } from '../../../testing/pages.js';
import { startCodeHostingFixture, type CodeHostingFamily, type CodeHostingFixture, type FixtureAccount } from '../../../testing/providers/code-hosting-fixture.js';
import type { RedirectProvider } from '../provider.js';
import { CODE_HOSTING_PROVIDER_KINDS } from './code-hosting.js';

interface Row {
  label: string;
  type: string;
  family: CodeHostingFamily;
  /** Settings beyond those that point the provider at the fixture. */
  settings?: Record<string, unknown>;
  /** The person signing in, as the provider knows them. */
  account: FixtureAccount;
  uid: string;
  /** The address the account starts with, and whether the provider vouches for it; undefined when it gives none. */
  email?: { address: string; verified: boolean };
  username?: string;
  name?: string;
}

const ROWS: Row[] = [
  {
    label: 'github, QUERY_EMAIL by default (the address list)',
    type: 'github',
    family: 'github',
    account: {
      user: { id: 583231, login: 'octoada', name: 'Ada Lovelace', email: null },
      emails: [
        { email: 'ada@old.example', verified: false, primary: false, visibility: null },
        { email: 'ada@example.com', verified: true, primary: true, visibility: 'private' },
      ],
    },
    uid: '583231',
    email: { address: 'ada@example.com', verified: true },
    username: 'octoada',
    name: 'Ada Lovelace',
  },
  {
    label: 'github, the primary address not verified at GitHub',
    type: 'github',
    family: 'github',
    account: {
      user: { id: 583233, login: 'octolin', name: 'Lin Lovelace', email: null },
      emails: [{ email: 'lin@example.com', verified: false, primary: true, visibility: 'private' }],
    },
    uid: '583233',
    email: { address: 'lin@example.com', verified: false },
    username: 'octolin',
    name: 'Lin Lovelace',
  },
  {
    label: 'github with QUERY_EMAIL false (the public address only)',
    type: 'github',
    family: 'github',
    settings: { query_email: false },
    account: { user: { id: 583232, login: 'octograce', name: 'Grace Hopper', email: 'grace@example.com' }, emails: [{ email: 'grace@example.com', verified: true, primary: true }] },
    uid: '583232',
    email: { address: 'grace@example.com', verified: false },
    username: 'octograce',
  },
  {
    label: 'gitlab',
    type: 'gitlab',
    family: 'gitlab',
    account: { user: { id: 1, username: 'ada_gl', name: 'Ada Lovelace', email: 'ada@example.com', state: 'active', confirmed_at: '2020-01-01T00:00:00Z' } },
    uid: '1',
    email: { address: 'ada@example.com', verified: false },
    username: 'ada_gl',
    name: 'Ada Lovelace',
  },
  {
    label: 'bitbucket_oauth2',
    type: 'bitbucket_oauth2',
    family: 'bitbucket',
    account: {
      user: { username: 'adabb', display_name: 'Ada Lovelace', account_id: '557058:0b7c3b1d-bb8f', uuid: '{d301aafa-d676-4ee0-88be-962be7417567}', nickname: 'adabb' },
      emails: [
        { email: 'ada@example.com', is_primary: true, is_confirmed: true },
        { email: 'ada@work.example', is_primary: false, is_confirmed: false },
      ],
    },
    uid: '557058:0b7c3b1d-bb8f',
    email: { address: 'ada@example.com', verified: true },
    username: 'adabb',
    name: 'Ada Lovelace',
  },
  {
    label: 'bitbucket_oauth2, the primary address not confirmed at Bitbucket',
    type: 'bitbucket_oauth2',
    family: 'bitbucket',
    account: {
      user: { username: 'linbb', display_name: 'Lin Lovelace', account_id: '557058:1c8d4c2e-cc90', uuid: '{e412bbfb-e787-4ff1-99cf-a73cf8528678}', nickname: 'linbb' },
      emails: [{ email: 'lin@example.com', is_primary: true, is_confirmed: false }],
    },
    uid: '557058:1c8d4c2e-cc90',
    email: { address: 'lin@example.com', verified: false },
    username: 'linbb',
    name: 'Lin Lovelace',
  },
  {
    label: 'stackexchange',
    type: 'stackexchange',
    family: 'stackexchange',
    account: { user: { account_id: 987654, user_id: 12345, display_name: 'Ada Lovelace', user_type: 'registered', link: 'https://stackoverflow.com/users/12345' } },
    uid: '987654',
  },
  {
    label: 'atlassian',
    type: 'atlassian',
    family: 'atlassian',
    account: { user: { account_id: '5b10a2844c20165700ede21g', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace', nickname: 'ada.atl', account_status: 'active' } },
    uid: '5b10a2844c20165700ede21g',
    email: { address: 'ada@example.com', verified: true },
    username: 'ada.atl',
    name: 'Ada Lovelace',
  },
  {
    label: 'atlassian, the address not verified at Atlassian',
    type: 'atlassian',
    family: 'atlassian',
    account: { user: { account_id: '5b10a2844c20165700ede21h', email: 'lin@example.com', email_verified: false, name: 'Lin Lovelace', nickname: 'lin.atl', account_status: 'active' } },
    uid: '5b10a2844c20165700ede21h',
    email: { address: 'lin@example.com', verified: false },
    username: 'lin.atl',
    name: 'Lin Lovelace',
  },
];

/** Each family's token refusal, as its documentation shows it (the fixture's comments name the pages). */
const TOKEN_ERROR_SHAPES: Record<CodeHostingFamily, { status: number; body: Record<string, unknown> }> = {
  github: { status: 200, body: { error: 'bad_verification_code' } },
  gitlab: { status: 400, body: { error: 'invalid_grant' } },
  bitbucket: { status: 400, body: { error: 'invalid_grant' } },
  stackexchange: { status: 400, body: { error: 'invalid_grant' } },
  atlassian: { status: 400, body: { error: 'invalid_grant' } },
};

let fixture: CodeHostingFixture;
beforeAll(async () => {
  fixture = await startCodeHostingFixture();
  for (const row of ROWS) fixture.accounts[row.family].set(row.label, row.account);
});
afterAll(() => fixture.close());

describe.each(testDatabaseKinds())('the code-hosting providers on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    fixture.tokenError = false;
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(row: Row, settings: Partial<SettingValues> = {}): Promise<void> {
    const app = { client_id: fixture.clientId, secret: fixture.clientSecret, key: fixture.requestKey, settings: { ...fixture.settingsFor(row.family), ...row.settings } };
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: { [row.type]: { APPS: [app] } }, ...settings } });
    browser = await PageClient.create(latchkey);
  }

  /** The provider's button, the browser at the provider, and the callback: the site's answer. */
  async function signIn(row: Row, client: PageClient, options: { deny?: boolean; fail?: boolean } = {}) {
    const started = await client.post(`/accounts/${row.type}/login/`, {});
    expect(started.statusCode).toBe(302);
    const callback = await fixture.authorize(started.headers.location!, { as: row.label, ...options });
    expect(`${callback.origin}${callback.pathname}`).toBe(`http://testserver/accounts/${row.type}/login/callback/`);
    return client.get(callback.pathname + callback.search);
  }

  const sessionUser = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId;

  describe.each(ROWS)('$label', (row) => {
    it('signs a new person up, trusting the address only as far as the provider vouches for it', async () => {
      await setUp(row);
      const answer = await signIn(row, browser);
      const { location } = answer.headers;
      const account = await latchkey.deps.store.socialAccounts.find(row.type, row.uid);
      if (row.email === undefined) {
        // No address: the person gives one on the signup form.
        expect(location).toBe('/accounts/3rdparty/signup/');
        expect(account).toBeUndefined();
        expect(await latchkey.deps.store.users.count()).toBe(0);
        return;
      }
      if (row.email.verified) {
        expect(location).toBe('/');
      } else {
        // ACCOUNT_EMAIL_VERIFICATION 'mandatory': the account waits for the address to be confirmed.
        expect(answer.statusCode).toBe(200);
        expect(answer.body).toContain('We have sent an email to verify your address.');
      }
      const user = (await latchkey.deps.store.users.findByEmail(row.email.address))!;
      expect(account).toMatchObject({ userId: user.id, provider: row.type, uid: row.uid });
      expect(user).toMatchObject({ ...(row.username ? { username: row.username } : {}), ...(row.name ? { name: row.name } : {}) });
      const addresses = await latchkey.deps.store.emailAddresses.listForUser(user.id);
      expect(addresses.find((address) => address.primary)).toMatchObject({ email: row.email.address, verified: row.email.verified });
      expect(await sessionUser(browser)).toBe(row.email.verified ? user.id : null);
      expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual(row.email.verified ? [] : [[row.email.address]]);
      // The address list is the provider's answer, not the account's extra data.
      expect(account!.extraData).not.toHaveProperty('emails');
    });

    it('signs a returning person in to the same account', async () => {
      await setUp(row, { ACCOUNT_EMAIL_VERIFICATION: 'optional' });
      const first = await signIn(row, browser);
      if (row.email === undefined) {
        expect(first.headers.location).toBe('/accounts/3rdparty/signup/');
        const signedUp = await browser.post('/accounts/3rdparty/signup/', { email: 'ada@example.com', username: 'ada' });
        expect(signedUp.statusCode).toBe(302);
      } else {
        expect(first.headers.location).toBe('/');
      }
      const { userId } = (await latchkey.deps.store.socialAccounts.find(row.type, row.uid))!;
      expect(await sessionUser(browser)).toBe(userId);

      const again = browser.another();
      expect((await signIn(row, again)).headers.location).toBe('/');
      expect(await sessionUser(again)).toBe(userId);
      expect(await latchkey.deps.store.users.count()).toBe(1);
    });

    it('takes a person who declines at the provider to the cancelled page', async () => {
      await setUp(row);
      expect((await signIn(row, browser, { deny: true })).headers.location).toBe('/accounts/3rdparty/login/cancelled/');
      expect((await browser.get('/accounts/3rdparty/login/cancelled/')).body).toContain('You decided to cancel');
      expect(await latchkey.deps.store.users.count()).toBe(0);
    });

    it('takes a provider error to the error page, signing nobody in', async () => {
      await setUp(row);
      expect((await signIn(row, browser, { fail: true })).headers.location).toBe('/accounts/3rdparty/login/error/');
      expect((await browser.get('/accounts/3rdparty/login/error/')).statusCode).toBe(401);
      expect(await sessionUser(browser)).toBeFalsy();
      expect(await latchkey.deps.store.users.count()).toBe(0);
    });

    it('takes a token endpoint refusing the code to the error page: nobody signed in, no account made', async () => {
      await setUp(row);
      fixture.tokenError = true;
      const refusals = fixture.tokenErrors.length;
      expect((await signIn(row, browser)).headers.location).toBe('/accounts/3rdparty/login/error/');
      // The refusal was the provider's own shape (GitHub's a 200 carrying error=bad_verification_code).
      const [refusal, ...more] = fixture.tokenErrors.slice(refusals);
      expect(more).toEqual([]);
      expect(refusal).toMatchObject({ family: row.family, status: TOKEN_ERROR_SHAPES[row.family].status, contentType: 'application/json' });
      expect(JSON.parse(refusal!.body)).toMatchObject(TOKEN_ERROR_SHAPES[row.family].body);
      expect((await browser.get('/accounts/3rdparty/login/error/')).statusCode).toBe(401);
      expect(await sessionUser(browser)).toBeFalsy();
      expect(await latchkey.deps.store.users.count()).toBe(0);
      expect(await latchkey.deps.store.socialAccounts.find(row.type, row.uid)).toBeUndefined();
    });
  });
});

describe('the code-hosting providers’ own endpoints, scopes and settings', () => {
  const context = { settings: testSettings(), clock: new ManualClock(), http: { timeoutSeconds: 5 } };
  const redirectUri = 'https://example.com/accounts/x/login/callback/';
  const kindOf = (type: string) => CODE_HOSTING_PROVIDER_KINDS.find((kind) => kind.id === type)!;
  async function authorizationUrl(type: string, settings: Record<string, unknown> = {}): Promise<URL> {
    const app = { provider: type, providerId: '', id: type, name: type, clientId: 'the-client', secret: 's', key: '', settings };
    return (await kindOf(type).build(app, context).authorizationUrl({ redirectUri, state: 'st' })).url;
  }
  const withoutQuery = (url: URL) => `${url.origin}${url.pathname}`;

  it.each([
    ['github', {}, 'https://github.com/login/oauth/authorize', 'user:email'],
    ['github', { query_email: false }, 'https://github.com/login/oauth/authorize', null],
    ['github', { github_url: 'https://git.corp.example/' }, 'https://git.corp.example/login/oauth/authorize', 'user:email'],
    ['gitlab', {}, 'https://gitlab.com/oauth/authorize', 'read_user'],
    ['gitlab', { gitlab_url: 'https://gitlab.corp.example' }, 'https://gitlab.corp.example/oauth/authorize', 'read_user'],
    ['bitbucket_oauth2', {}, 'https://bitbucket.org/site/oauth2/authorize', null],
    ['stackexchange', {}, 'https://stackexchange.com/oauth', null],
    ['atlassian', {}, 'https://auth.atlassian.com/authorize', 'read:me'],
  ])('%s with %j sends the browser to %s with scope %s', async (type, settings, endpoint, scope) => {
    const url = await authorizationUrl(type, settings);
    expect(withoutQuery(url)).toBe(endpoint);
    expect(url.searchParams.get('scope')).toBe(scope);
  });

  it('sends Atlassian’s audience and consent prompt, under the app’s own parameters', async () => {
    const url = await authorizationUrl('atlassian', { auth_params: { prompt: 'none' } });
    expect(url.searchParams.get('audience')).toBe('api.atlassian.com');
    expect(url.searchParams.get('prompt')).toBe('none');
  });

  it.each([
    ['github', { github_url: 'http://git.corp.example' }, 'github_url'],
    ['github', { query_email: 'yes' }, 'query_email'],
    ['gitlab', { gitlab_url: 'gitlab.corp.example' }, 'gitlab_url'],
    ['bitbucket_oauth2', { api_url: 42 }, 'api_url'],
    ['stackexchange', { site: '' }, 'site'],
    ['atlassian', { auth_params: 'audience=x' }, 'auth_params'],
  ])('%s refuses %j, naming %s', (type, settings, key) => {
    expect(kindOf(type).checkSettings(settings)).toMatchObject({ key, reason: 'invalid' });
  });

  it.each([
    ['form-encoded', 'application/x-www-form-urlencoded', 'error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.'],
    ['JSON', 'application/json', JSON.stringify({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' })],
  ])('github refuses a bad_verification_code answered in a 200, %s', async (_encoding, contentType, body) => {
    // GitHub's token endpoint answers a bad code with HTTP 200: the error is in the body, whatever its encoding.
    const fakeFetch: typeof fetch = () => Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': contentType } }));
    const app = { provider: 'github', providerId: '', id: 'github', name: 'GitHub', clientId: 'the-client', secret: 's', key: '', settings: {} };
    const provider = kindOf('github').build(app, { ...context, http: { fetch: fakeFetch, timeoutSeconds: 5 } }) as RedirectProvider;
    const { pending } = await provider.authorizationUrl({ redirectUri, state: 'st' });
    const completing = provider.completeAuthorization({ callbackUrl: new URL(`${redirectUri}?code=c&state=st`), redirectUri, expectedState: 'st', pending });
    await expect(completing).rejects.toMatchObject({ name: 'ProviderError', message: expect.stringContaining('error=bad_verification_code') });
  });

  it('stackexchange wants its request key (the app’s key field) before any sign-in', () => {
    expect(kindOf('stackexchange').checkApp!({ settings: {}, secret: 's', key: '' })).toMatchObject({ key: 'key', reason: 'required' });
    expect(kindOf('stackexchange').checkApp!({ settings: {}, secret: 's', key: 'request-key' })).toBeUndefined();
  });
});
