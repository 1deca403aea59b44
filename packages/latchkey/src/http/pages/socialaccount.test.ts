/**
 * Signing in through an OpenID Connect provider on the pages, against a real provider
 * (oidc-provider on loopback): signup, a later sign-in, MFA after it, and the attacks the sign-in
 * must withstand (login CSRF, forged, replayed and other browsers' states, an unverified address
 * that belongs to someone else, closed signup, an address the project's rules refuse).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountAdapter } from '../../account/adapter.js';
import { createUser } from '../../account/users.js';
import { LatchkeyError } from '../../core/errors.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { CORP_LOGIN as LOGIN, corpProviders, sessionUserOf, startCorpProvider, throughCorp } from '../../testing/corp-sso.js';
import type { TestOidcProvider } from '../../testing/oidc-provider.js';
import { PageClient } from '../../testing/pages.js';


const ACCOUNTS = [
  { sub: 'ada-at-corp', claims: { email: 'ada@corp.example', email_verified: true, name: 'Ada Lovelace', preferred_username: 'ada' } },
  { sub: 'mallory-at-corp', claims: { email: 'grace@example.com', email_verified: false, name: 'Not Grace' } },
];

let provider: TestOidcProvider;
beforeAll(async () => {
  provider = await startCorpProvider(ACCOUNTS);
});
afterAll(() => provider.close());

describe.each(testDatabaseKinds())('signing in with an OpenID Connect provider on the pages, on %s', (kind) => {
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

  /** The button on the login page, the provider's consent (as `login`), and the callback. */
  const signInAs = (login: string, client = browser) => throughCorp(provider, client, login);
  const sessionUser = (client = browser) => sessionUserOf(latchkey, client);

  it('lists the provider on the login page, and signs a new person up with the verified address and name it gave', async () => {
    await setUp();
    const loginPage = await browser.get('/accounts/login/');
    expect(loginPage.body).toContain(`href="${LOGIN}"`);
    expect(loginPage.body).toContain('Corp SSO');

    const { response } = await signInAs('ada-at-corp');
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/');
    const user = await latchkey.deps.store.users.findByEmail('ada@corp.example');
    expect(user).toMatchObject({ username: 'ada', name: 'Ada Lovelace' });
    expect(await sessionUser()).toBe(user!.id);
    expect(await latchkey.deps.store.emailAddresses.listForUser(user!.id)).toMatchObject([{ email: 'ada@corp.example', verified: true, primary: true }]);
    expect(await latchkey.deps.store.socialAccounts.listForUser(user!.id)).toMatchObject([{ provider: 'corp', uid: 'ada-at-corp' }]);
    const events = (await latchkey.deps.store.auditLog.listForUser(user!.id, 100)).map((record) => record.event);
    expect(events).toEqual(expect.arrayContaining(['user_signed_up', 'social_account_added', 'user_logged_in']));
  });

  it('signs a returning person in to the same account, and asks for the code when they have an authenticator app', async () => {
    await setUp();
    await signInAs('ada-at-corp');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@corp.example'))!;
    const totp = await activateTotpFor(latchkey, ada);

    // Another browser: the first one is still signed in.
    const again = browser.another();
    const { response } = await signInAs('ada-at-corp', again);
    expect(response.headers.location).toBe('/accounts/2fa/authenticate/');
    expect(await sessionUser(again)).toBeNull();
    const signedIn = await again.post('/accounts/2fa/authenticate/', { code: totp.code() });
    expect(signedIn.statusCode).toBe(302);
    expect(await sessionUser(again)).toBe(ada.id);
    expect(await latchkey.deps.store.users.count()).toBe(1);
    const logins = (await latchkey.deps.store.auditLog.listForUser(ada.id, 100)).filter((record) => record.event === 'user_logged_in').map((record) => record.data);
    expect(logins).toContainEqual({ method: 'socialaccount+totp' });
  });

  it('only asks on a GET (a link cannot start a sign-in), and refuses a POST without the CSRF token', async () => {
    await setUp();
    const asked = await browser.get(LOGIN);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain(`<form method="post" action="${LOGIN}"`);
    // The redirect that answers the button goes to the provider: the page's policy lets it.
    expect(asked.headers['content-security-policy']).toContain(`form-action 'self' ${new URL(provider.issuer).origin};`);
    const forged = await browser.post(LOGIN, {}, { csrf: false });
    expect(forged.statusCode).toBe(403);
    expect(await browser.get('/accounts/oidc/nobody/login/')).toMatchObject({ statusCode: 404 });
  });

  it('refuses a forged state, a replayed callback and another browser’s callback, signing nobody in', async () => {
    await setUp();
    const started = await browser.post(LOGIN, {});
    const callback = await provider.followAuthorization(started.headers.location!, { as: { login: 'ada-at-corp' } });
    const forged = new URL(callback);
    forged.searchParams.set('state', 'made-up');
    expect(await browser.get(forged.pathname + forged.search)).toMatchObject({ statusCode: 302, headers: { location: '/accounts/3rdparty/login/error/' } });

    const stranger = browser.another();
    expect((await stranger.get(callback.pathname + callback.search)).headers.location).toBe('/accounts/3rdparty/login/error/');
    expect(await sessionUser(stranger)).toBeUndefined();
    // The rightful browser's state is still unused, and good once.
    expect((await browser.get(callback.pathname + callback.search)).headers.location).toBe('/');
    const replayed = await browser.another().get(callback.pathname + callback.search);
    expect(replayed.headers.location).toBe('/accounts/3rdparty/login/error/');
    expect((await browser.get('/accounts/3rdparty/login/error/')).statusCode).toBe(401);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('never signs in to, nor links, an account whose address an unverified provider account also gives', async () => {
    // Even with email authentication on: the provider does not vouch for this address.
    await setUp({ SOCIALACCOUNT_EMAIL_AUTHENTICATION: true, SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT: true });
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: 'a long enough passphrase', emailVerified: true });
    const { response } = await signInAs('mallory-at-corp');
    expect(response.headers.location).toBe('/accounts/3rdparty/signup/');
    const form = await browser.get('/accounts/3rdparty/signup/');
    expect(form.body).toContain('value="grace@example.com"');
    const taken = await browser.post('/accounts/3rdparty/signup/', { email: 'grace@example.com', username: 'notgrace' });
    expect(taken.statusCode).toBe(400);
    expect(taken.body).toContain('An account already exists with this email address. Please sign in to that account first, then connect your Corp SSO account.');
    expect(await sessionUser()).toBeFalsy();
    expect(await latchkey.deps.store.socialAccounts.listForUser(grace.id)).toEqual([]);
    expect(await latchkey.deps.store.socialAccounts.find('corp', 'mallory-at-corp')).toBeUndefined();
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('with signup closed refuses new people, and still lets in those who have an account', async () => {
    await setUp({ ACCOUNT_ALLOW_REGISTRATION: false });
    const refused = await signInAs('ada-at-corp');
    expect(refused.response.statusCode).toBe(403);
    expect(refused.response.body).toContain('sign up is currently closed');
    expect(await latchkey.deps.store.users.count()).toBe(0);

    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: null, emailVerified: true });
    await latchkey.deps.store.socialAccounts.create({ userId: grace.id, provider: 'corp', uid: 'mallory-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
    const { response } = await signInAs('mallory-at-corp');
    expect(response.headers.location).toBe('/');
    expect(await sessionUser()).toBe(grace.id);
  });

  it("sends a new person whose address the project's cleanEmail refuses to the signup form, which says why and takes another", async () => {
    await setUp();
    // The project's rule (a domain allowlist, in the generated project): example.com only.
    latchkey.deps.adapter = new (class extends AccountAdapter {
      override cleanEmail(email: string): string {
        if (email.endsWith('@example.com')) return email;
        throw new LatchkeyError('invalid_email', 'Sign-up is limited to addresses at: example.com.', { param: 'email' });
      }
    })(latchkey.settings);
    const { response } = await signInAs('ada-at-corp');
    expect(response.headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await latchkey.deps.store.users.count()).toBe(0);
    expect(await sessionUser()).toBeFalsy();

    const form = await browser.get('/accounts/3rdparty/signup/');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('value="ada@corp.example"');
    expect(form.body).toContain('Sign-up is limited to addresses at: example.com.');
    const again = await browser.post('/accounts/3rdparty/signup/', { email: 'ada@corp.example', username: 'ada' });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('Sign-up is limited to addresses at: example.com.');
    expect(await latchkey.deps.store.users.count()).toBe(0);

    // An address the rule accepts; the provider did not vouch for it, so it is confirmed by mail first.
    const done = await browser.post('/accounts/3rdparty/signup/', { email: 'ada@example.com', username: 'ada' });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('We have sent an email to verify your address.');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(await latchkey.deps.store.socialAccounts.listForUser(ada.id)).toMatchObject([{ provider: 'corp', uid: 'ada-at-corp' }]);
    expect(latchkey.mailer.lastTo('ada@example.com')).toBeDefined();
  });

  it('takes a person who declines at the provider to the cancelled page', async () => {
    await setUp();
    const started = await browser.post(LOGIN, {});
    const callback = await provider.followAuthorization(started.headers.location!, { as: { deny: true } });
    expect((await browser.get(callback.pathname + callback.search)).headers.location).toBe('/accounts/3rdparty/login/cancelled/');
    expect((await browser.get('/accounts/3rdparty/login/cancelled/')).body).toContain('You decided to cancel');
  });

  it('lists the connected account on /accounts/3rdparty/, and disconnects it for a user who has a password', async () => {
    await setUp();
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: 'a long enough passphrase', emailVerified: true });
    const account = await latchkey.deps.store.socialAccounts.create({ userId: grace.id, provider: 'corp', uid: 'mallory-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
    await signInAs('mallory-at-corp');
    const listed = await browser.get('/accounts/3rdparty/');
    expect(listed.body).toContain('Corp SSO: mallory-at-corp');

    const removed = await browser.post('/accounts/3rdparty/', { account: String(account.id) });
    expect(removed).toMatchObject({ statusCode: 302, headers: { location: '/accounts/3rdparty/' } });
    expect(await latchkey.deps.store.socialAccounts.listForUser(grace.id)).toEqual([]);
    expect((await latchkey.deps.store.auditLog.listForUser(grace.id, 100)).map((record) => record.event)).toContain('social_account_removed');
    expect((await browser.get('/accounts/3rdparty/')).body).toContain('no third-party accounts connected');
  });

  it('refuses to disconnect the last way a passwordless user signs in, another user’s account, and a stale sign-in', async () => {
    await setUp();
    await signInAs('ada-at-corp');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@corp.example'))!;
    const [own] = await latchkey.deps.store.socialAccounts.listForUser(ada.id);
    const refused = await browser.post('/accounts/3rdparty/', { account: String(own!.id) });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Your account has no password set up.');

    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: 'a long enough passphrase', emailVerified: true });
    const theirs = await latchkey.deps.store.socialAccounts.create({ userId: grace.id, provider: 'corp', uid: 'mallory-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
    const notTheirs = await browser.post('/accounts/3rdparty/', { account: String(theirs.id) });
    expect(notTheirs.statusCode).toBe(400);
    expect(notTheirs.body).toContain('The account was not found.');
    expect(await latchkey.deps.store.socialAccounts.findById(theirs.id)).toBeDefined();

    latchkey.clock.advance(10 * 60 * 1000);
    const stale = await browser.post('/accounts/3rdparty/', { account: String(own!.id) });
    expect(stale.headers.location).toMatch(/^\/accounts\/reauthenticate\//);
    expect(await latchkey.deps.store.socialAccounts.listForUser(ada.id)).toHaveLength(1);
  });
});
