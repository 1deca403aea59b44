/**
 * The project's adapters (src/users/adapters.ts) in a real social signup, through the pages:
 * allauth's dummy provider (a stand-in identity provider on the site itself, for tests and
 * development only) sends the person back to the callback; the social account adapter decides
 * whether they may sign up (the signup switch) and fills their account, and the account adapter's
 * cleanEmail judges the address the provider gave (the domain allowlist), as it judges a typed one.
 */
import { testDatabaseKinds, type TestLatchkey } from '@latchkey/core/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { projectSettings } from '../src/config/settings.js';
import { AccountAdapter, SocialAccountAdapter } from '../src/users/adapters.js';
import { Browser, csrfTokenOf, signInThroughDummy } from './browser.js';
import { createProjectLatchkey } from './project.js';

const DUMMY = { dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] } };

describe.each(testDatabaseKinds())('signing up through a provider on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  async function setUp(env: Record<string, string> = {}): Promise<Browser> {
    // The project's adapters, as src/server.ts passes them to createLatchkey.
    latchkey = await createProjectLatchkey({
      kind,
      env,
      settings: { SOCIALACCOUNT_PROVIDERS: DUMMY },
      adapter: (settings) => new AccountAdapter(settings),
      socialAdapter: (settings) => new SocialAccountAdapter(settings),
    });
    app = await buildApp(latchkey);
    await app.ready();
    return new Browser(app);
  }

  it('signs a new person up with the name the provider gave', async () => {
    const browser = await setUp();
    expect((await browser.get('/accounts/login/')).body).toContain('href="/accounts/dummy/login/"');
    const signedUp = await signInThroughDummy(browser, { id: 'ada-1815', email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(signedUp.statusCode).toBe(302);
    const ada = await latchkey.users.findByEmail('ada@example.com');
    expect(ada?.name).toBe('Ada Lovelace');
    expect(await latchkey.socialAccounts.listForUser(ada!)).toMatchObject([{ provider: 'dummy', uid: 'ada-1815' }]);
  });

  it('refuses a new person while signup is closed (LATCHKEY_ACCOUNT_ALLOW_REGISTRATION=false), and stores nothing', async () => {
    const browser = await setUp({ LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false' });
    const refused = await signInThroughDummy(browser, { id: 'ada-1815', email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('We are sorry, but the sign up is currently closed.');
    expect(await latchkey.users.count()).toBe(0);
  });

  it("applies the domain allowlist (LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST) to the provider's address: not signed up, asked for another", async () => {
    const browser = await setUp({ LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: 'example.com' });
    const refused = await signInThroughDummy(browser, { id: 'ada-1815', email: 'ada@elsewhere.net', name: 'Ada Lovelace' });
    expect(refused.headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await latchkey.users.count()).toBe(0);
    // The social signup form says why, and takes an address at a listed domain.
    const form = await browser.get('/accounts/3rdparty/signup/');
    expect(form.body).toContain('Sign-up is limited to addresses at: example.com.');
    const typed = await browser.post('/accounts/3rdparty/signup/', [
      ['csrfmiddlewaretoken', csrfTokenOf(form.body)],
      ['email', 'ada@example.com'],
%% if username %%
      ['username', 'ada'],
%% endif %%
    ]);
    // The provider vouched for another address: this one is confirmed by mail first.
    expect(typed.statusCode).toBe(200);
    expect(typed.body).toContain('We have sent an email to verify your address.');
    const ada = await latchkey.users.findByEmail('ada@example.com');
    expect(await latchkey.socialAccounts.listForUser(ada!)).toMatchObject([{ provider: 'dummy', uid: 'ada-1815' }]);

    const accepted = await signInThroughDummy(new Browser(app), { id: 'grace-1906', email: 'Grace@Example.COM', name: 'Grace Hopper' });
    expect(accepted.statusCode).toBe(302);
    const grace = await latchkey.users.findByEmail('grace@example.com');
    expect(grace?.name).toBe('Grace Hopper');
    expect(await latchkey.users.count()).toBe(2);
  });
});

describe('the providers src/config/settings.ts reads from the environment', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is read from OIDC_PROVIDER_ID, OIDC_NAME, OIDC_CLIENT_ID, OIDC_SECRET and OIDC_SERVER_URL, and absent without them', () => {
    expect(projectSettings.base?.SOCIALACCOUNT_PROVIDERS).toEqual({ openid_connect: { APPS: [] } });
    vi.stubEnv('OIDC_PROVIDER_ID', 'company-sso');
    vi.stubEnv('OIDC_NAME', 'Company SSO');
    vi.stubEnv('OIDC_CLIENT_ID', 'the-client-id');
    vi.stubEnv('OIDC_SECRET', 'the-secret');
    vi.stubEnv('OIDC_SERVER_URL', 'https://id.example.com');
    expect(projectSettings.base?.SOCIALACCOUNT_PROVIDERS).toEqual({
      openid_connect: { APPS: [{ provider_id: 'company-sso', name: 'Company SSO', client_id: 'the-client-id', secret: 'the-secret', settings: { server_url: 'https://id.example.com' } }] },
    });
  });

  it('adds Google and GitHub from GOOGLE_CLIENT_ID, GOOGLE_SECRET, GITHUB_CLIENT_ID and GITHUB_SECRET, each only when its client id is set', () => {
    vi.stubEnv('GOOGLE_CLIENT_ID', 'google-client');
    vi.stubEnv('GOOGLE_SECRET', 'google-secret');
    expect(projectSettings.base?.SOCIALACCOUNT_PROVIDERS).toEqual({ openid_connect: { APPS: [] }, google: { APPS: [{ client_id: 'google-client', secret: 'google-secret' }] } });
    vi.stubEnv('GITHUB_CLIENT_ID', 'github-client');
    vi.stubEnv('GITHUB_SECRET', 'github-secret');
    expect(projectSettings.base?.SOCIALACCOUNT_PROVIDERS).toMatchObject({ github: { APPS: [{ client_id: 'github-client', secret: 'github-secret' }] } });
  });
});
