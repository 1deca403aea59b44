/**
 * Social sign-in through an OpenID Connect provider, in Chromium against the example site: a
 * person signs up from the login page's "Corp SSO" link and its Continue button, signs in again
 * the same way to the same account, and, once they have an authenticator app, is asked for its
 * code after the provider; on the connections page they disconnect it (once they have a password)
 * and connect it again.
 *
 * The provider is the test one (packages/latchkey/src/testing/oidc-provider.ts: oidc-provider on
 * loopback), which signs in `nextLogin` at its interaction with no page of its own, so the browser
 * goes to it and straight back. It starts first, since the site's settings need its issuer (given
 * as LATCHKEY_SOCIALACCOUNT_PROVIDERS JSON, as an operator may); the redirect URI it allows is the
 * site's callback, known once the site has picked its port.
 *
 * The button's POST is answered with a redirect to the provider, which Chromium follows only if
 * the page's Content-Security-Policy lists the provider in form-action: these journeys are what
 * show that it does (a refused redirect is a console error, and the sign-in never comes back).
 *
 * The journeys run once, on PostgreSQL when TEST_DATABASE_URL names a server (what a deployed site
 * runs on), else SQLite. Where the two databases differ (a social sign-up's one transaction of a
 * user, an address and a social account, their unique constraints and JSON), the flows and pages
 * are tested on both without a browser.
 */
import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestOidcProvider } from '../packages/latchkey/src/testing/oidc-provider.js';
import { activateAuthenticatorApp, passCodePage } from './app-code-journey.js';
import { PERIOD_MS } from './authenticator-app.js';
import { browserTestsEnabled, deployedDatabase, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, startSiteAndBrowser, uniqueName } from './journey.js';

const PROVIDER_ID = 'corp';
const PROVIDER_NAME = 'Corp SSO';
const LOGIN_PATH = `/accounts/oidc/${PROVIDER_ID}/login/`;
const CALLBACK_PATH = `${LOGIN_PATH}callback/`;
const CLIENT = { client_id: 'example-site', client_secret: uniqueName('provider-secret-') };
/** The journey with the app may wait for a time step in real time, on top of what any journey may take. */
const MFA_JOURNEY_TIMEOUT_MS = JOURNEY_TIMEOUT_MS + PERIOD_MS;

/** A person's account at the provider: its `sub`, and the username the site makes from preferred_username. */
interface CorpAccount {
  sub: string;
  username: string;
  email: string;
}

function corpAccount(prefix: string): CorpAccount {
  const username = uniqueName(prefix);
  return { sub: `${username}-at-corp`, username, email: `${username}@corp.example` };
}

describe.runIf(browserTestsEnabled()).each([deployedDatabase()])('social sign-in through OpenID Connect, on %s', (database) => {
  // One account at the provider per journey, so that each journey signs up a person of its own.
  const ada = corpAccount('ada');
  const bea = corpAccount('bea');
  const cleo = corpAccount('cleo');
  const dora = corpAccount('dora');
  let provider: TestOidcProvider | undefined;
  let site: RunningSite;
  let browser: Browser;

  beforeAll(async () => {
    // The site's callback, allowed once the site has started (and so has its port).
    const redirectUris: string[] = [];
    provider = await startTestOidcProvider({
      clients: [{ ...CLIENT, redirect_uris: () => redirectUris }],
      accounts: [ada, bea, cleo, dora].map((account) => ({
        sub: account.sub,
        // The address is verified at the provider: the site signs the person up without asking for one.
        claims: { email: account.email, email_verified: true, name: `${account.username} at Corp`, preferred_username: account.username },
      })),
    });
    ({ site, browser } = await startSiteAndBrowser({
      database,
      env: {
        // The operator's way without touching the settings file (docs/social.md): the apps as JSON.
        LATCHKEY_SOCIALACCOUNT_PROVIDERS: JSON.stringify({
          openid_connect: { APPS: [{ provider_id: PROVIDER_ID, name: PROVIDER_NAME, client_id: CLIENT.client_id, secret: CLIENT.client_secret, settings: { server_url: provider.issuer } }] },
        }),
      },
    }));
    redirectUris.push(`${site.url}${CALLBACK_PATH}`);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop(), provider?.close()]);
  }, SETUP_TIMEOUT_MS);

  /**
   * From the login page: the provider's link, the page with the Continue button, and the trip to
   * the provider (signed in there as `account`) and back. Checks that the browser really went to
   * the provider's authorization endpoint and came back to the callback.
   */
  async function signInThroughProvider(person: Person, account: CorpAccount, shot: string): Promise<void> {
    provider!.nextLogin = account.sub;
    await person.visit('/accounts/login/', `${shot}-login-page`);
    await person.follow(PROVIDER_NAME, `${shot}-continue-page`, person.page.locator('main'));
    expect(person.pathname()).toBe(LOGIN_PATH);
    expect(await person.heading()).toBe(`Sign in via ${PROVIDER_NAME}`);
    expect(await person.text()).toContain(`You are about to sign in using a third-party account from ${PROVIDER_NAME}.`);

    const visited: string[] = [];
    const onRequest = (request: Request) => {
      if (request.isNavigationRequest() && request.frame() === person.page.mainFrame()) visited.push(request.url());
    };
    person.page.on('request', onRequest);
    try {
      await person.press('Continue', `${shot}-back-from-provider`);
    } finally {
      person.page.off('request', onRequest);
    }
    const issuer = new URL(provider!.issuer);
    expect(visited.some((url) => new URL(url).origin === issuer.origin), `navigations: ${visited.join(' -> ')}`).toBe(true);
    expect(visited.some((url) => url.startsWith(`${site.url}${CALLBACK_PATH}?`)), `navigations: ${visited.join(' -> ')}`).toBe(true);
  }

  async function expectSignedIn(person: Person, account: CorpAccount, shot = 'home-signed-in'): Promise<void> {
    // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
    expect(person.pathname()).toBe(`/users/${account.username}/`);
    expect(await person.heading()).toBe(account.username);
    expect(await person.messages()).toEqual([`Successfully signed in as ${account.username}.`]);
    expect(await person.homeStatus(shot)).toContain(`Signed in as ${account.username}.`);
  }

  async function signOut(person: Person, shot: string): Promise<void> {
    await person.visit('/accounts/logout/', `${shot}-confirmation`);
    await person.press('Sign out', shot, person.page.locator('main'));
    expect(await person.text()).toContain('You are not signed in.');
  }

  it('signs a new person up through the provider, with no form to fill, and signs them out', async () => {
    const person = await Person.open(browser, site);
    // The page with the button lets its form lead to the provider, and nowhere else.
    const continuePage = await person.visit(LOGIN_PATH, 'continue-page-policy');
    const policy = continuePage.headers()['content-security-policy'] ?? '';
    expect(policy).toContain(`form-action 'self' ${new URL(provider!.issuer).origin};`);

    await signInThroughProvider(person, ada, 'signup');
    await expectSignedIn(person, ada);
    // The address the provider gave, verified there, is the account's, verified here too.
    await person.visit('/accounts/email/', 'email-addresses');
    expect(await person.page.locator('main table').innerText()).toMatch(new RegExp(`${ada.email.replaceAll('.', '\\.')}\\s+Verified, primary`));
    await signOut(person, 'signed-out');
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('signs a returning person in to the same account', async () => {
    const first = await Person.open(browser, site, 'first-visit');
    await signInThroughProvider(first, bea, 'signup');
    await expectSignedIn(first, bea);
    await signOut(first, 'signed-out');
    await first.close();

    // Signed out, and in a browser that has never seen the provider or the site: the same account.
    const person = await Person.open(browser, site, 'returning');
    await signInThroughProvider(person, bea, 'login');
    await expectSignedIn(person, bea);
    await signOut(person, 'signed-out');
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('after an authenticator app is turned on, asks for its code after the provider, and the right code signs in', async () => {
    const person = await Person.open(browser, site);
    await signInThroughProvider(person, cleo, 'signup');
    await expectSignedIn(person, cleo);

    // Right after the sign-in, so no reauthentication is asked; the address is verified already.
    const app = await activateAuthenticatorApp(person);
    await signOut(person, 'signed-out');

    // The provider vouches for them, but the site asks for the app's code before signing them in.
    await signInThroughProvider(person, cleo, 'login');
    await passCodePage(person, app);
    await expectSignedIn(person, cleo, 'home-signed-in-after-code');
    await person.close();
  }, MFA_JOURNEY_TIMEOUT_MS);

  it('disconnects the provider once the account has a password, connects it again from the connections page, and signs in through it', async () => {
    const person = await Person.open(browser, site);
    await signInThroughProvider(person, dora, 'signup');
    await expectSignedIn(person, dora);

    // The provider is the only way in: removing it is refused until the account has a password.
    await person.visit('/accounts/3rdparty/', 'connections');
    expect(await person.text()).toContain(`${PROVIDER_NAME}: ${dora.sub}`);
    const refused = await person.press('Remove', 'remove-refused', person.page.locator('main'));
    expect(refused.status()).toBe(400);
    expect(await person.formErrors()).toEqual(['Your account has no password set up.']);

    await person.visit('/accounts/password/set/', 'password-set-form');
    await person.fill({ password1: 'a long enough passphrase', password2: 'a long enough passphrase' });
    await person.press('Set password', 'password-set');
    await person.visit('/accounts/3rdparty/', 'connections-with-password');
    await person.press('Remove', 'removed', person.page.locator('main'));
    expect(await person.messages()).toContain('The third-party account has been disconnected.');
    expect(await person.text()).toContain('You currently have no third-party accounts connected to this account.');

    // Connect it again: the provider's link under "Add a third-party account", its button, the provider.
    provider!.nextLogin = dora.sub;
    await person.follow(PROVIDER_NAME, 'connect-page', person.page.locator('main'));
    expect(await person.heading()).toBe(`Connect ${PROVIDER_NAME}`);
    expect(await person.text()).toContain(`You are about to connect a new third-party account from ${PROVIDER_NAME}.`);
    await person.press('Continue', 'connected');
    expect(person.pathname()).toBe('/accounts/3rdparty/');
    expect(await person.messages()).toContain('The third-party account has been connected.');
    expect(await person.text()).toContain(`${PROVIDER_NAME}: ${dora.sub}`);

    // The connected account signs in to this account again.
    await signOut(person, 'signed-out');
    await signInThroughProvider(person, dora, 'login-after-connect');
    await expectSignedIn(person, dora);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
