/**
 * Social sign-in in the example site's single-page app (examples/site/spa/), through the headless
 * API's browser client, in Chromium against the running site and a real OpenID Connect provider:
 * a person signs up with the provider's button, signs out, signs in again to the same account,
 * turns on an authenticator app and, signing in through the provider once more, must give its
 * code; a person with a password connects the provider from "Connected accounts" (after confirming
 * who they are, when their login is old), disconnects it, and signs in through it; a person whose
 * provider gave no address completes their signup on the app's form; a failed sign-in's
 * `?error=` is shown.
 *
 * The app's button is a real form post to auth/provider/redirect, answered with a redirect to the
 * provider (the test one, packages/latchkey/src/testing/oidc-provider.ts, which signs `nextLogin`
 * in with no page of its own), whose callback on the site sends the browser back to the app's
 * `#/provider/callback/...` route. The app's page sets no form-action in its Content-Security-Policy
 * (examples/site/src/app.ts says why): a policy that refused the redirect would show here as a
 * console error and a sign-in that never comes back.
 *
 * The site runs on the real clock with MFA_TOTP_TOLERANCE 0, so the login with the app's code waits
 * for the time step after the activation's (see `freshCode`); the connections page is visited in
 * between.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestOidcProvider } from '../packages/latchkey/src/testing/oidc-provider.js';
import { appCode, freshCode, PERIOD_MS, sleep } from './authenticator-app.js';
import { browserTestsEnabled, expectNoConsoleErrors, screenshot, type RunningSite } from './harness.js';
import { ageLogin, JOURNEY_TIMEOUT_MS, newAccount, Person, SETUP_TIMEOUT_MS, startSiteAndBrowser, uniqueName } from './journey.js';

const PROVIDER_ID = 'corp';
const PROVIDER_NAME = 'Corp SSO';
const CALLBACK_PATH = `/accounts/oidc/${PROVIDER_ID}/login/callback/`;
const CLIENT = { client_id: 'example-site', client_secret: uniqueName('provider-secret-') };
const API = '/_allauth/browser/v1';
/** The journey with the app may wait for a time step in real time, on top of what any journey may take. */
const MFA_JOURNEY_TIMEOUT_MS = JOURNEY_TIMEOUT_MS + PERIOD_MS;

/**
 * The app routes on the API's statuses: a 401 (nobody signed in, "confirm it is you"), a 404 (no
 * authenticator yet), a refused input. Chromium logs each as a console error, expected for API
 * calls only; anything else (a script error, a form the CSP refused) fails the journey.
 */
const EXPECTED_API_STATUSES = [/^console error at http:\/\/127\.0\.0\.1:\d+\/_allauth\/browser\/v1\/\S+: Failed to load resource: the server responded with a status of (400|401|404|409) /];

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

/** What one person at the app sees and does: every view they land on is screenshotted and checked for console errors. */
class SpaUser {
  constructor(readonly page: Page) {}

  /** Waits until the app shows the view with this heading (its data loaded), then screenshots it. */
  async sees(heading: string, shot: string, message?: string): Promise<void> {
    await this.page.locator('main:not([aria-busy]) > h1', { hasText: new RegExp(`^${heading}$`) }).waitFor({ timeout: 15_000 });
    if (message !== undefined) await this.page.locator('main .message', { hasText: message }).waitFor({ timeout: 15_000 });
    await screenshot(this.page, shot);
    expectNoConsoleErrors(this.page, { allow: EXPECTED_API_STATUSES });
  }

  async fill(fields: Record<string, string>, formName?: string): Promise<void> {
    const scope = formName ? this.page.getByRole('form', { name: formName }) : this.page.locator('main');
    for (const [name, value] of Object.entries(fields)) await scope.locator(`[name=${JSON.stringify(name)}]`).fill(value);
  }

  async press(button: string): Promise<void> {
    await this.page.locator('main').getByRole('button', { name: button, exact: true }).click();
  }

  async navigate(link: string): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: link, exact: true }).click();
  }

  async signOut(shot: string): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out' }).click();
    await this.sees('Sign in', shot, 'You have signed out.');
  }

  /** The errors the page shows after a request was refused. */
  async errors(): Promise<string[]> {
    const errors = this.page.locator('main .errors li');
    await errors.first().waitFor({ timeout: 15_000 });
    return (await errors.allTextContents()).map((error) => error.trim());
  }

  async text(selector: string): Promise<string> {
    return ((await this.page.locator(selector).innerText()) ?? '').replace(/\s+/g, ' ').trim();
  }

  /** The address table as a person reads it: `address: status`. */
  async addresses(): Promise<string[]> {
    const rows = await this.page.locator('#spa-emails tbody tr').all();
    return Promise.all(rows.map(async (row) => `${(await row.locator('td').nth(0).innerText()).trim()}: ${(await row.locator('td').nth(1).innerText()).trim()}`));
  }

  /** The connected accounts as a person reads them: `provider: account`. */
  async providerAccounts(): Promise<string[]> {
    const rows = await this.page.locator('#spa-provider-accounts tbody tr').all();
    return Promise.all(rows.map(async (row) => `${(await row.locator('td').nth(0).innerText()).trim()}: ${(await row.locator('td').nth(1).innerText()).trim()}`));
  }
}

describe.runIf(browserTestsEnabled())('social sign-in in the single-page app (headless browser client)', () => {
  const ada = corpAccount('ada');
  const bea = corpAccount('bea');
  const dora = corpAccount('dora');
  let provider: TestOidcProvider | undefined;
  let site: RunningSite;
  let browser: Browser;
  // The site's database is the test's own file, so that a journey can age a login (see ageLogin).
  let directory: string | undefined;
  let databasePath: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'lk-e2e-spa-social-'));
    databasePath = join(directory, 'db.sqlite3');
    // The site's callback, allowed once the site has started (and so has its port).
    const redirectUris: string[] = [];
    provider = await startTestOidcProvider({
      clients: [{ ...CLIENT, redirect_uris: () => redirectUris }],
      accounts: [
        ...[ada, bea].map((account) => ({
          sub: account.sub,
          // The address is verified at the provider: the site signs the person up without asking for one.
          claims: { email: account.email, email_verified: true, name: `${account.username} at Corp`, preferred_username: account.username },
        })),
        // No address at all: the signup needs the app's form.
        { sub: dora.sub, claims: { name: `${dora.username} at Corp`, preferred_username: dora.username } },
      ],
    });
    ({ site, browser } = await startSiteAndBrowser({
      env: {
        DATABASE_URL: `sqlite:${databasePath}`,
        LATCHKEY_SOCIALACCOUNT_PROVIDERS: JSON.stringify({
          openid_connect: { APPS: [{ provider_id: PROVIDER_ID, name: PROVIDER_NAME, client_id: CLIENT.client_id, secret: CLIENT.client_secret, settings: { server_url: provider.issuer } }] },
        }),
      },
    }));
    redirectUris.push(`${site.url}${CALLBACK_PATH}`);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop(), provider?.close()]);
    if (directory) rmSync(directory, { recursive: true, force: true });
  }, SETUP_TIMEOUT_MS);

  /**
   * Runs `act` (a click that posts one of the app's provider forms) and waits until the app's page
   * is loaded anew, then for the view with `heading`. Returns the page navigations on the way:
   * the form post, the provider (unless the API sent the browser straight back), its callback.
   */
  async function leaveAndComeBack(spa: SpaUser, act: () => Promise<void>, heading: string, shot: string, message?: string): Promise<string[]> {
    const { page } = spa;
    const visited: string[] = [];
    const onRequest = (request: Request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) visited.push(request.url());
    };
    // A new document at /spa/ (a change of route alone is no new document: it is not awaited here).
    const returned = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() && new URL(frame.url()).pathname === '/spa/', timeout: 15_000 });
    returned.catch(() => undefined);
    page.on('request', onRequest);
    try {
      await act();
      await returned;
      await spa.sees(heading, shot, message);
    } finally {
      page.off('request', onRequest);
    }
    expect(visited[0], `navigations: ${visited.join(' -> ')}`).toBe(`${site.url}${API}/auth/provider/redirect`);
    return visited;
  }

  /** From the view that shows "<verb> with Corp SSO": the provider (signed in there as `account`) and back to the app's view with `heading`. */
  async function throughProvider(spa: SpaUser, account: CorpAccount, button: string, heading: string, shot: string, message?: string): Promise<void> {
    provider!.nextLogin = account.sub;
    const visited = await leaveAndComeBack(spa, () => spa.press(button), heading, shot, message);
    const issuer = new URL(provider!.issuer);
    expect(visited.some((url) => new URL(url).origin === issuer.origin), `navigations: ${visited.join(' -> ')}`).toBe(true);
    expect(visited.some((url) => url.startsWith(`${site.url}${CALLBACK_PATH}?`)), `navigations: ${visited.join(' -> ')}`).toBe(true);
  }

  it('signs a person up through the provider, signs them in again to the same account, and after an authenticator app is turned on asks for its code', async () => {
    const person = await Person.open(browser, site);
    const spa = new SpaUser(person.page);

    // The app's page keeps its policy; the login view offers the provider, with a form that comes back to the app.
    const page = await person.page.goto('/spa/');
    expect(page?.headers()['content-security-policy']).toBe("default-src 'self'; frame-ancestors 'none'");
    await spa.sees('Sign in', 'login-view');
    const form = person.page.locator('#spa-providers form');
    expect(await form.getAttribute('action')).toBe(`${API}/auth/provider/redirect`);
    expect(await form.getAttribute('method')).toBe('post');
    expect(await form.locator('[name=callback_url]').inputValue()).toBe('/spa/#/provider/callback/login');
    expect(await form.locator('[name=process]').inputValue()).toBe('login');
    expect(await form.locator('[name=provider]').inputValue()).toBe(PROVIDER_ID);

    // Signed up by the provider's answer alone (its address is verified there), and signed in.
    await throughProvider(spa, ada, `Sign in with ${PROVIDER_NAME}`, 'Your account', 'signed-up');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${ada.username}.`);
    expect(await spa.addresses()).toEqual([`${ada.email}: Primary, Verified`]);
    // The `?error=` of a failure would be in the query: a success leaves none.
    expect(new URL(person.page.url()).search).toBe('');

    await spa.signOut('signed-out');
    await throughProvider(spa, ada, `Sign in with ${PROVIDER_NAME}`, 'Your account', 'signed-in-again');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${ada.username}.`);

    // An authenticator app, right after the sign-in (no reauthentication asked).
    await spa.navigate('Two-factor authentication');
    await spa.sees('Activate authenticator app', 'totp-activation');
    const secret = await spa.text('#spa-totp-secret');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const activation = await freshCode(secret, 5_000);
    await spa.fill({ code: activation.code });
    await spa.press('Activate');
    await spa.sees('Authenticator app', 'totp-active', 'Authenticator app activated.');

    // The provider is the account's only way in (no password): disconnecting it is refused.
    await spa.navigate('Connected accounts');
    await spa.sees('Connected accounts', 'connected-accounts');
    expect(await spa.providerAccounts()).toEqual([`${PROVIDER_NAME}: ${ada.username} at Corp`]);
    await person.page.getByRole('button', { name: `Disconnect ${PROVIDER_NAME} account ${ada.username} at Corp` }).click();
    expect(await spa.errors()).toEqual(['Your account has no password set up.']);
    await spa.sees('Connected accounts', 'disconnect-refused');
    expect(await spa.providerAccounts()).toEqual([`${PROVIDER_NAME}: ${ada.username} at Corp`]);

    // Signed out, the provider signs them in there, but here the code is asked first (also after a reload).
    await spa.signOut('signed-out-with-app');
    await throughProvider(spa, ada, `Sign in with ${PROVIDER_NAME}`, 'Two-factor authentication', 'code-step');
    await person.page.reload();
    await spa.sees('Two-factor authentication', 'code-step-after-reload');
    await spa.fill({ code: appCode(secret, Date.now()) === '000000' ? '111111' : '000000' });
    await spa.press('Sign in');
    expect(await spa.errors()).toEqual(['Incorrect code.']);
    // The activation's code is used up: the next step's code is the first that can sign in.
    const nextStepAt = (activation.step + 1) * PERIOD_MS;
    if (Date.now() < nextStepAt + 500) await sleep(nextStepAt + 500 - Date.now());
    const login = await freshCode(secret, 3_000);
    expect(login.step).toBeGreaterThan(activation.step);
    await spa.fill({ code: login.code });
    await spa.press('Sign in');
    await spa.sees('Your account', 'signed-in-with-code');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${ada.username}.`);
    await person.close();
  }, MFA_JOURNEY_TIMEOUT_MS);

  it('connects the provider to an account with a password (confirming who it is when the login is old), disconnects it, and signs in through it', async () => {
    const { username, email, password } = newAccount('bea');
    const person = await Person.open(browser, site);
    const spa = new SpaUser(person.page);
    await person.page.goto('/spa/#/signup');
    await spa.sees('Sign up', 'signup-view');
    expect(await person.page.locator('#spa-providers button').allInnerTexts()).toEqual([`Sign up with ${PROVIDER_NAME}`]);
    // In local mode verification is optional: the signup signs in.
    await spa.fill({ email, username, password }, 'Sign up');
    await spa.press('Sign up');
    await spa.sees('Your account', 'signed-up');

    await spa.navigate('Connected accounts');
    await spa.sees('Connected accounts', 'no-connected-accounts');
    expect(await spa.text('#spa-no-providers')).toBe('You have no third-party accounts connected to this account.');
    expect(await person.page.locator('main form [name=callback_url]').inputValue()).toBe(`/spa/#/provider/callback/connect/${PROVIDER_ID}`);
    await throughProvider(spa, bea, `Connect ${PROVIDER_NAME}`, 'Connected accounts', 'connected', 'The third-party account has been connected.');
    expect(await spa.providerAccounts()).toEqual([`${PROVIDER_NAME}: ${bea.username} at Corp`]);

    // Ten minutes later, disconnecting asks for the password first, then goes through.
    await ageLogin(site, databasePath, person, 10 * 60);
    await person.page.getByRole('button', { name: `Disconnect ${PROVIDER_NAME} account ${bea.username} at Corp` }).click();
    await spa.sees('Confirm it is you', 'disconnect-reauthenticate');
    await spa.fill({ password }, 'Confirm with password');
    await spa.press('Confirm');
    await spa.sees('Connected accounts', 'disconnected', `Disconnected your ${PROVIDER_NAME} account ${bea.username} at Corp.`);
    expect(await spa.providerAccounts()).toEqual([]);

    // Ten minutes later again, connecting is refused before the provider (the API sends the browser
    // straight back with ?error=reauthentication_required); confirmed, the app sends it again.
    await ageLogin(site, databasePath, person, 10 * 60);
    provider!.nextLogin = bea.sub;
    const refused = await leaveAndComeBack(spa, () => spa.press(`Connect ${PROVIDER_NAME}`), 'Confirm it is you', 'connect-reauthenticate');
    expect(refused.some((url) => new URL(url).origin === new URL(provider!.issuer).origin), `navigations: ${refused.join(' -> ')}`).toBe(false);
    expect(new URL(person.page.url()).search).toBe('');
    expect(new URL(person.page.url()).hash).toBe('#/account/providers');
    await spa.fill({ password }, 'Confirm with password');
    const visited = await leaveAndComeBack(spa, () => spa.press('Confirm'), 'Connected accounts', 'connected-after-reauthenticating', 'The third-party account has been connected.');
    expect(visited.some((url) => url.startsWith(`${site.url}${CALLBACK_PATH}?`)), `navigations: ${visited.join(' -> ')}`).toBe(true);
    expect(await spa.providerAccounts()).toEqual([`${PROVIDER_NAME}: ${bea.username} at Corp`]);

    // The connected account signs in to this account.
    await spa.signOut('signed-out');
    await throughProvider(spa, bea, `Sign in with ${PROVIDER_NAME}`, 'Your account', 'signed-in-through-provider');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${username}.`);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it("completes a signup on the app's form when the provider gave no address, and shows a failed sign-in's error", async () => {
    const person = await Person.open(browser, site);
    const spa = new SpaUser(person.page);

    // A failure comes back as ?error= before the app's route: the app says what happened and clears it.
    await person.page.goto('/spa/?error=cancelled&error_process=login#/provider/callback/login');
    await spa.sees('Sign in', 'cancelled');
    expect(await spa.errors()).toEqual(['You cancelled signing in with the third-party account.']);
    expect(new URL(person.page.url()).search).toBe('');

    await throughProvider(spa, dora, `Sign in with ${PROVIDER_NAME}`, 'Complete your signup', 'signup-form');
    expect(await spa.text('#spa-provider-signup')).toBe(`You are about to use your ${PROVIDER_NAME} account to sign up. As a final step, please complete the following form:`);
    expect(await person.page.locator('main form [name=username]').inputValue()).toBe(dora.username);
    expect(await person.page.locator('main form [name=email]').inputValue()).toBe('');
    // The form waits in the session: a reload shows it again.
    await person.page.reload();
    await spa.sees('Complete your signup', 'signup-form-after-reload');
    await spa.fill({ email: dora.email }, 'Complete your signup');
    await spa.press('Sign up');
    await spa.sees('Your account', 'signed-up');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${dora.username}.`);
    expect(await spa.addresses()).toEqual([`${dora.email}: Primary, Unverified`]);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
