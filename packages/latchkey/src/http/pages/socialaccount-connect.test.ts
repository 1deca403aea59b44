/**
 * What a provider account can be to a local one, on the pages, against a real OpenID provider
 * (oidc-provider on loopback): the social signup form when the provider's answer cannot sign a
 * person up alone, connecting a second way in (and never someone else's), email authentication
 * for providers the project trusts, and the provider's tokens kept only when asked, encrypted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import type { SettingValues } from '../../config/settings.js';
import { openProviderToken } from '../../socialaccount/tokens.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { CORP_LOGIN as LOGIN, corpProviders, sessionUserOf, startCorpProvider, throughCorp } from '../../testing/corp-sso.js';
import type { TestOidcProvider } from '../../testing/oidc-provider.js';
import { mainOf, PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

const ACCOUNTS = [
  // Vouched for by the provider.
  { sub: 'grace-at-corp', claims: { email: 'grace@example.com', email_verified: true, name: 'Grace Hopper', preferred_username: 'grace' } },
  // Not vouched for.
  { sub: 'hal-at-corp', claims: { email: 'hal@example.com', email_verified: false, name: 'Hal' } },
];

let provider: TestOidcProvider;
beforeAll(async () => {
  provider = await startCorpProvider(ACCOUNTS);
});
afterAll(() => provider.close());

describe.each(testDatabaseKinds())('provider accounts and local accounts on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: corpProviders(provider), ...settings } });
    // ID tokens are checked on the site's clock: it starts at the provider's time.
    latchkey.clock.set(provider.now());
    browser = await PageClient.create(latchkey);
  }

  /** The provider's consent (as `login`) after a POST to the login URL, and the callback's answer. */
  const throughProvider = async (login: string, fields: Record<string, string> = {}) => (await throughCorp(provider, browser, login, fields)).response;
  const sessionUser = () => sessionUserOf(latchkey, browser);

  async function signInWithPassword(login: string): Promise<void> {
    expect((await browser.post('/accounts/login/', { login, password: PASSWORD })).statusCode).toBe(302);
  }

  it('asks for the signup form when SOCIALACCOUNT_AUTO_SIGNUP is off, prefilled, and signs the person up from it', async () => {
    await setUp({ SOCIALACCOUNT_AUTO_SIGNUP: false });
    expect((await throughProvider('grace-at-corp')).headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await latchkey.deps.store.users.count()).toBe(0);
    const form = await browser.get('/accounts/3rdparty/signup/');
    expect(form.body).toContain('use your Corp SSO account to sign up');
    expect(form.body).toContain('value="grace@example.com"');
    expect(form.body).toContain('value="grace"');

    const done = await browser.post('/accounts/3rdparty/signup/', { email: 'grace@example.com', username: 'grace' });
    expect(done).toMatchObject({ statusCode: 302, headers: { location: '/' } });
    const grace = (await latchkey.deps.store.users.findByEmail('grace@example.com'))!;
    expect(await sessionUser()).toBe(grace.id);
    // The address the provider vouched for is stored verified: no mail, no waiting.
    expect(await latchkey.deps.store.emailAddresses.listForUser(grace.id)).toMatchObject([{ email: 'grace@example.com', verified: true }]);
    expect(await latchkey.deps.store.socialAccounts.listForUser(grace.id)).toMatchObject([{ provider: 'corp', uid: 'grace-at-corp' }]);
    // The form is gone with its signup.
    expect((await browser.get('/accounts/3rdparty/signup/')).headers.location).toBe('/accounts/login/');
  });

  it('sends another address the form gives through verification, as a local signup’s', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'hal', email: 'hal@example.com', password: PASSWORD, emailVerified: true });
    expect((await throughProvider('hal-at-corp')).headers.location).toBe('/accounts/3rdparty/signup/');
    const done = await browser.post('/accounts/3rdparty/signup/', { email: 'hal.second@example.com', username: 'hal2' });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('We have sent an email to verify your address.');
    const created = (await latchkey.deps.store.users.findByEmail('hal.second@example.com'))!;
    expect(await latchkey.deps.store.emailAddresses.listForUser(created.id)).toMatchObject([{ verified: false }]);
    expect(await sessionUser()).toBeFalsy();
    expect(latchkey.mailer.outbox.at(-1)?.to).toEqual(['hal.second@example.com']);
  });

  it('connects the provider account to a signed-in user after a recent sign-in, and tells the owner', async () => {
    await setUp();
    const grace = await createUser(latchkey.deps, { username: 'gracelocal', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await signInWithPassword('gracelocal');
    const page = await browser.get('/accounts/3rdparty/');
    expect(page.body).toContain(`href="${LOGIN}?process=connect"`);
    expect((await browser.get(`${LOGIN}?process=connect`)).body).toContain('<input type="hidden" name="process" value="connect">');

    const connected = await throughProvider('grace-at-corp', { process: 'connect' });
    expect(connected.headers.location).toBe('/accounts/3rdparty/');
    expect(await latchkey.deps.store.socialAccounts.listForUser(grace.id)).toMatchObject([{ provider: 'corp', uid: 'grace-at-corp' }]);
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toContain('[Test Site] A Corp SSO account was connected to your account');
    expect(await latchkey.deps.store.users.count()).toBe(1);

    // Later, with a stale sign-in, connecting again first asks who they are, then returns to the connect button.
    latchkey.clock.advance(10 * 60 * 1000);
    const stale = await browser.post(LOGIN, { process: 'connect' });
    const back = `${LOGIN}?process=connect`;
    expect(stale.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(back)}`);
    const reauthenticated = await browser.post('/accounts/reauthenticate/', { password: PASSWORD, next: back });
    expect(reauthenticated.headers.location).toBe(back);
    expect((await browser.get(back)).body).toContain('<input type="hidden" name="process" value="connect">');
    expect((await throughProvider('grace-at-corp', { process: 'connect' })).headers.location).toBe('/accounts/3rdparty/');
  });

  it('sends a connect whose provider answers after the sign-in went stale to reauthenticate, connecting nothing', async () => {
    await setUp();
    const grace = await createUser(latchkey.deps, { username: 'gracelocal', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await signInWithPassword('gracelocal');
    // Started within the window; the person lingers at the provider past it.
    const started = await browser.post(LOGIN, { process: 'connect' });
    const callback = await provider.followAuthorization(started.headers.location!, { as: { login: 'grace-at-corp' } });
    latchkey.clock.advance(10 * 60 * 1000 - 1000);
    const answered = await browser.get(callback.pathname + callback.search);
    // Back to the connect button once the person has proved who they are.
    expect(answered.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(`${LOGIN}?process=connect`)}`);
    expect(await latchkey.deps.store.socialAccounts.listForUser(grace.id)).toEqual([]);
    expect(await sessionUser()).toBe(grace.id);
  });

  it('keeps the next a connect was asked to lead to through reauthentication, and follows it once connected', async () => {
    await setUp();
    const grace = await createUser(latchkey.deps, { username: 'gracelocal', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await signInWithPassword('gracelocal');
    latchkey.clock.advance(10 * 60 * 1000);

    // The connect button, asked from a page of the site's own that wants the person back.
    expect((await browser.get(`${LOGIN}?process=connect&next=%2Fdashboard%2F`)).body).toContain('<input type="hidden" name="next" value="/dashboard/">');
    const stale = await browser.post(LOGIN, { process: 'connect', next: '/dashboard/' });
    const back = `${LOGIN}?process=connect&next=%2Fdashboard%2F`;
    expect(stale.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(back)}`);

    // The reauthentication page keeps that way back (a path whose query holds an encoded next) and follows it.
    const reauthenticate = await browser.get(stale.headers.location!);
    expect(reauthenticate.body).toContain(`name="next" value="${back.replaceAll('&', '&amp;')}"`);
    const reauthenticated = await browser.post('/accounts/reauthenticate/', { password: PASSWORD, next: back });
    expect(reauthenticated.headers.location).toBe(back);

    const button = await browser.get(back);
    expect(button.body).toContain('<input type="hidden" name="process" value="connect">');
    expect(button.body).toContain('<input type="hidden" name="next" value="/dashboard/">');
    const connected = await throughProvider('grace-at-corp', { process: 'connect', next: '/dashboard/' });
    expect(connected.headers.location).toBe('/dashboard/');
    expect(await latchkey.deps.store.socialAccounts.listForUser(grace.id)).toMatchObject([{ provider: 'corp', uid: 'grace-at-corp' }]);
  });

  it('keeps a connect’s next when the provider answers after the sign-in went stale, and never an unsafe one', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'gracelocal', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await signInWithPassword('gracelocal');
    const started = await browser.post(LOGIN, { process: 'connect', next: '/dashboard/?tab=sso' });
    const callback = await provider.followAuthorization(started.headers.location!, { as: { login: 'grace-at-corp' } });
    latchkey.clock.advance(10 * 60 * 1000 - 1000);
    const answered = await browser.get(callback.pathname + callback.search);
    const back = `${LOGIN}?process=connect&next=${encodeURIComponent('/dashboard/?tab=sso')}`;
    expect(answered.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(back)}`);

    // A next that is not a same-site path is dropped when the connect starts: the way back has none.
    for (const next of ['//evil.example/', 'https://evil.example/', '/\\evil.example/', '/%2F%2Fevil.example/']) {
      const refused = await browser.post(LOGIN, { process: 'connect', next });
      expect(refused.headers.location, next).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(`${LOGIN}?process=connect`)}`);
    }
    // And one smuggled into the way back is refused by the button's page, which reads it decoded.
    const smuggled = await browser.get(`${LOGIN}?process=connect&next=${encodeURIComponent('//evil.example/')}`);
    expect(mainOf(smuggled.body)).not.toContain('name="next"');
  });

  it('refuses to connect a provider account another user has, and moves nothing', async () => {
    await setUp();
    const owner = await createUser(latchkey.deps, { username: 'owner', email: 'owner@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.deps.store.socialAccounts.create({ userId: owner.id, provider: 'corp', uid: 'grace-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
    const other = await createUser(latchkey.deps, { username: 'other', email: 'other@example.com', password: PASSWORD, emailVerified: true });
    await signInWithPassword('other');
    const refused = await throughProvider('grace-at-corp', { process: 'connect' });
    expect(refused.headers.location).toBe('/accounts/3rdparty/');
    expect((await browser.get('/accounts/3rdparty/')).body).toContain('already connected to a different account');
    expect(await latchkey.deps.store.socialAccounts.listForUser(other.id)).toEqual([]);
    expect(await latchkey.deps.store.socialAccounts.listForUser(owner.id)).toHaveLength(1);
    expect(await sessionUser()).toBe(other.id);
  });

  it('refuses a connect that comes back to a browser signed out (or in as someone else) since it started', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'grace', email: 'grace.local@example.com', password: PASSWORD, emailVerified: true });
    await signInWithPassword('grace');
    const started = await browser.post(LOGIN, { process: 'connect' });
    const callback = await provider.followAuthorization(started.headers.location!, { as: { login: 'grace-at-corp' } });
    await browser.post('/accounts/logout/', {});
    expect((await browser.get(callback.pathname + callback.search)).headers.location).toBe('/accounts/3rdparty/login/error/');
    expect(await latchkey.deps.store.socialAccounts.find('corp', 'grace-at-corp')).toBeUndefined();
  });

  it('with email authentication, signs in to the account of a vouched-for address, wiping a stranger’s password on an unverified one', async () => {
    await setUp({ SOCIALACCOUNT_EMAIL_AUTHENTICATION: true });
    // Someone signed up with Grace's address before her and never verified it.
    const squatter = await createUser(latchkey.deps, { username: 'squatter', email: 'grace@example.com', password: PASSWORD, emailVerified: false });
    const squatterBrowser = browser.another();
    await squatterBrowser.post('/accounts/login/', { login: 'squatter', password: PASSWORD });

    const response = await throughProvider('grace-at-corp');
    expect(response.headers.location).toBe('/');
    expect(await sessionUser()).toBe(squatter.id);
    const after = (await latchkey.deps.store.users.findById(squatter.id))!;
    expect(isUsablePassword(after.password)).toBe(false);
    expect(await latchkey.deps.store.emailAddresses.listForUser(squatter.id)).toMatchObject([{ email: 'grace@example.com', verified: true }]);
    // Without AUTO_CONNECT nothing is linked.
    expect(await latchkey.deps.store.socialAccounts.find('corp', 'grace-at-corp')).toBeUndefined();
    expect((await squatterBrowser.get('/accounts/email/')).headers.location).toMatch(/^\/accounts\/login\//);
  });

  it('with email authentication and auto-connect, links the account for good', async () => {
    await setUp({ SOCIALACCOUNT_EMAIL_AUTHENTICATION: true, SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT: true });
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await throughProvider('grace-at-corp');
    expect(await sessionUser()).toBe(grace.id);
    expect(isUsablePassword((await latchkey.deps.store.users.findById(grace.id))!.password)).toBe(true);
    expect(await latchkey.deps.store.socialAccounts.listForUser(grace.id)).toMatchObject([{ uid: 'grace-at-corp' }]);
  });

  it('keeps the provider’s tokens only with SOCIALACCOUNT_STORE_TOKENS, encrypted', async () => {
    await setUp();
    await throughProvider('grace-at-corp');
    const grace = (await latchkey.deps.store.users.findByEmail('grace@example.com'))!;
    const [account] = await latchkey.deps.store.socialAccounts.listForUser(grace.id);
    expect(await latchkey.deps.store.socialTokens.listForAccount(account!.id)).toEqual([]);
    await latchkey.destroy();
    await browser.close();

    await setUp({ SOCIALACCOUNT_STORE_TOKENS: true });
    await throughProvider('grace-at-corp');
    const stored = (await latchkey.deps.store.users.findByEmail('grace@example.com'))!;
    const [kept] = await latchkey.deps.store.socialAccounts.listForUser(stored.id);
    const [token] = await latchkey.deps.store.socialTokens.listForAccount(kept!.id);
    const opened = openProviderToken(latchkey.deps, token!);
    expect(opened?.accessToken.length).toBeGreaterThan(10);
    expect(token!.sealedToken).not.toContain(opened!.accessToken);
    // The access token works at the provider's userinfo endpoint: it is the real one.
    const userinfo = await fetch(`${provider.issuer}/me`, { headers: { authorization: `Bearer ${opened!.accessToken}` } });
    expect(((await userinfo.json()) as { sub: string }).sub).toBe('grace-at-corp');
  });

  it('tells the owner when a provider account is disconnected', async () => {
    await setUp();
    const grace = await createUser(latchkey.deps, { username: 'gracelocal', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    const account = await latchkey.deps.store.socialAccounts.create({ userId: grace.id, provider: 'corp', uid: 'grace-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
    await signInWithPassword('gracelocal');
    await browser.post('/accounts/3rdparty/', { account: String(account.id) });
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toEqual(['[Test Site] A Corp SSO account was disconnected from your account']);
  });
});
