/**
 * The example site's single-page app (examples/site/spa/), a plain-JavaScript client of
 * the headless API's browser client, driven in Chromium against the running site with a real SMTP
 * server. One person signs up, confirms their address from the mailed key, signs in, activates an
 * authenticator app from the secret the app shows, adds a second address (confirming who they are
 * when the API asks), confirms it, makes it primary, removes the first, and signs in again with
 * password and code, then turns the app off. Along the way: the CSRF cookie is copied into
 * X-CSRFToken on every change, and a request without it is refused. A second site, a project that
 * signs in by email, shows the forms following the API's `config`.
 *
 * The sites are started with HEADLESS_FRONTEND_URLS pointing confirmation mails at the app's route
 * `/spa/#/verify/<key>`, so the person follows the mailed link itself, as a project with its own
 * front end would have them do.
 *
 * The site runs on the real clock with MFA_TOTP_TOLERANCE 0, so the second login waits for the
 * time step after the activation's (see `freshCode`); the email steps run in between.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appCode, freshCode, PERIOD_MS, sleep } from './authenticator-app.js';
import { browserTestsEnabled, expectNoConsoleErrors, linkFromEmail, screenshot, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, ageLogin, newAccount, startSitesAndBrowser, uniqueName, waitForEmail } from './journey.js';

/** The journey may wait for one time step in real time, on top of what any journey may take. */
const SPA_JOURNEY_TIMEOUT_MS = JOURNEY_TIMEOUT_MS + PERIOD_MS;
const CONFIRM_SUBJECT = 'Please confirm your email address';
const API = '/_allauth/browser/v1';

/**
 * The app routes on the API's statuses, so a 401 ("nobody signed in", "confirm it is you"), a 404
 * (no authenticator yet) or a refused input is part of its normal course; Chromium logs each
 * failed response as a console error, which is expected for API calls only. Anything else (a
 * script error, a resource the CSP blocked, a missing file) still fails the journey.
 */
const EXPECTED_API_STATUSES = [/^console error at http:\/\/127\.0\.0\.1:\d+\/_allauth\/browser\/v1\/\S+: Failed to load resource: the server responded with a status of (400|401|403|404|409|429) /];

/** Confirmation mails link to the app (HEADLESS_FRONTEND_URLS), `{key}` in its route. */
const FRONTEND_URLS_ENV = { LATCHKEY_HEADLESS_FRONTEND_URLS: JSON.stringify({ account_confirm_email: '{SITE_URL}/spa/#/verify/{key}' }) };

/** The app route a confirmation mail links to (`/spa/#/verify/<key>`), as a path to open on the site. */
function mailedAppRoute(mail: Parameters<typeof linkFromEmail>[0]): string {
  const link = new URL(linkFromEmail(mail, '/spa/'));
  if (!link.hash.startsWith('#/verify/')) throw new Error(`Not a confirmation link: ${link.href}`);
  return `${link.pathname}${link.hash}`;
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

  async open(path: string, heading: string, shot: string): Promise<void> {
    await this.page.goto(path);
    await this.sees(heading, shot);
  }

  async fill(fields: Record<string, string>, formName?: string): Promise<void> {
    const scope = formName ? this.page.getByRole('form', { name: formName }) : this.page.locator('main');
    for (const [name, value] of Object.entries(fields)) await scope.locator(`[name=${JSON.stringify(name)}]`).fill(value);
  }

  async press(button: string): Promise<void> {
    await this.page.locator('main').getByRole('button', { name: button, exact: true }).click();
  }

  /** The errors a form shows after its request was refused. */
  async formErrors(): Promise<string[]> {
    const errors = this.page.locator('main .errors li');
    await errors.first().waitFor({ timeout: 15_000 });
    return (await errors.allTextContents()).map((error) => error.trim());
  }

  async messages(): Promise<string[]> {
    return (await this.page.locator('main .message').allTextContents()).map((message) => message.trim());
  }

  async text(selector: string): Promise<string> {
    return ((await this.page.locator(selector).innerText()) ?? '').replace(/\s+/g, ' ').trim();
  }

  /** The address table as a person reads it: `address: status`. */
  async addresses(): Promise<string[]> {
    const rows = await this.page.locator('#spa-emails tbody tr').all();
    return Promise.all(rows.map(async (row) => `${(await row.locator('td').nth(0).innerText()).trim()}: ${(await row.locator('td').nth(1).innerText()).trim()}`));
  }

  async navLinks(): Promise<string[]> {
    return (await this.page.getByRole('navigation', { name: 'Account' }).locator('a, button').allInnerTexts()).map((text) => text.trim());
  }

  async csrfCookie(): Promise<string | undefined> {
    return (await this.page.context().cookies()).find((cookie) => cookie.name === 'csrftoken')?.value;
  }
}

interface RecordedChange {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
}

describe.runIf(browserTestsEnabled())('the single-page app (headless browser client)', () => {
  let site: RunningSite;
  /** A project that signs in by email (USERNAME_TYPE email): the app draws its forms from `config`. */
  let emailSite: RunningSite;
  let browser: Browser;
  // The site's database is the test's own file, so that the journey can age a login (see ageLogin).
  let directory: string | undefined;
  let databasePath: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'lk-e2e-spa-'));
    databasePath = join(directory, 'db.sqlite3');
    let sites: RunningSite[];
    ({ sites, browser } = await startSitesAndBrowser([
      { env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory', DATABASE_URL: `sqlite:${databasePath}`, ...FRONTEND_URLS_ENV } },
      { usernameType: 'email', env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ...FRONTEND_URLS_ENV } },
    ]));
    [site, emailSite] = sites as [RunningSite, RunningSite];
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop(), emailSite?.stop()]);
    if (directory) rmSync(directory, { recursive: true, force: true });
  }, SETUP_TIMEOUT_MS);

  /**
   * A POST from within the page, as a script on it (or a forged copy of the app's request) would
   * send it: without X-CSRFToken, with a wrong value, or with the `csrftoken` cookie's value.
   */
  async function postFromPage(page: Page, path: string, body: object, csrfHeader: 'none' | 'wrong' | 'cookie'): Promise<{ status: number; body: { status?: number } }> {
    const cookie = (await page.context().cookies()).find((candidate) => candidate.name === 'csrftoken')?.value ?? '';
    const token = { none: undefined, wrong: 'x'.repeat(32), cookie }[csrfHeader];
    return page.evaluate(
      async ({ url, body, token }) => {
        const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(token === undefined ? {} : { 'X-CSRFToken': token }) };
        const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'same-origin' });
        return { status: response.status, body: (await response.json()) as { status?: number } };
      },
      { url: `${API}${path}`, body, token },
    );
  }

  it('signs up, confirms the address from the mailed key, signs in with an authenticator app, and manages addresses', async () => {
    const ada = newAccount('ada');
    const second = `${uniqueName('ada')}@example.org`;
    const person = await Person.open(browser, site);
    const spa = new SpaUser(person.page);

    // Every change the app sends, with its headers (the Cookie header included), to check below.
    const changes: Promise<RecordedChange>[] = [];
    let probing = false;
    person.page.on('request', (request: Request) => {
      if (probing || request.method() === 'GET' || !request.url().includes('/_allauth/')) return;
      changes.push(request.allHeaders().then((headers) => ({ method: request.method(), url: request.url(), headers, body: request.postData() })));
    });

    // The app's page: only this origin's scripts, never framed. Nobody is signed in: the login view.
    const page = await person.page.goto('/spa/');
    expect(page?.status()).toBe(200);
    expect(page?.headers()['content-security-policy']).toBe("default-src 'self'; frame-ancestors 'none'");
    await spa.sees('Sign in', 'login-view');
    expect(await spa.navLinks()).toEqual(['Sign in', 'Sign up']);

    // The first answer set the CSRF cookie, readable by the app. A change sent without it in
    // X-CSRFToken, or with another value, is refused; with it, the request is heard (and refused
    // here only for its wrong password).
    const csrf = await spa.csrfCookie();
    expect(csrf).toMatch(/^[A-Za-z0-9]{32}$/);
    probing = true;
    const noHeader = await postFromPage(person.page, '/auth/login', { username: ada.username, password: ada.password }, 'none');
    expect(noHeader.status).toBe(403);
    expect(noHeader.body.status).toBe(403);
    expect((await postFromPage(person.page, '/auth/login', { username: ada.username, password: ada.password }, 'wrong')).status).toBe(403);
    const withHeader = await postFromPage(person.page, '/auth/login', { username: ada.username, password: 'not-the-password' }, 'cookie');
    expect(withHeader.status).toBe(400);
    probing = false;

    // Sign up. Verification is mandatory: the app shows the step the API says the signup waits at,
    // and still does after a reload (it asks the API, it does not remember).
    await person.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Sign up' }).click();
    await spa.sees('Sign up', 'signup-view');
    await spa.fill({ email: ada.email, username: ada.username, password: ada.password });
    await spa.press('Sign up');
    await spa.sees('Verify your email address', 'verify-email-step');
    expect(await spa.text('#spa-verify-email')).toBe('We have sent you an email to verify your address. Follow the link in it to finish.');
    await person.page.reload();
    await spa.sees('Verify your email address', 'verify-email-step-after-reload');

    // A key that is not one: nothing to confirm.
    await spa.open('/spa/#/verify/not-a-key', 'Confirm email address', 'verify-invalid-key');
    expect(await spa.text('#spa-verify-invalid')).toBe('This confirmation link has expired or is not valid.');

    // The mailed key, opened in the app: it says what it confirms and waits for the button.
    const mail = await waitForEmail(site.smtp, { to: ada.email, subject: CONFIRM_SUBJECT });
    const route = mailedAppRoute(mail);
    await spa.open(route, 'Confirm email address', 'verify-key');
    expect(await spa.text('#spa-verify-info')).toBe(`Please confirm that ${ada.email} is an email address for the account ${ada.username}.`);
    await spa.press('Confirm');
    // Confirming proves the address, not this browser: the person signs in next. The key has left the address bar.
    await spa.sees('Sign in', 'address-confirmed', `You have confirmed ${ada.email}.`);
    expect(person.page.url()).not.toContain(route.slice('/spa/#/verify/'.length));

    await spa.fill({ login: ada.username, password: ada.password });
    await spa.press('Sign in');
    await spa.sees('Your account', 'signed-in');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${ada.username}.`);
    expect(await spa.navLinks()).toEqual(['Account', 'Two-factor authentication', 'Sign out']);
    expect(await spa.addresses()).toEqual([`${ada.email}: Primary, Verified`]);
    // A new login, a new CSRF secret: the one seen before it is worthless after it.
    expect(await spa.csrfCookie()).not.toBe(csrf);

    // Activate an authenticator app from the secret the app shows (no QR code: typed in by hand).
    await person.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Two-factor authentication' }).click();
    await spa.sees('Activate authenticator app', 'totp-activation');
    const secret = await spa.text('#spa-totp-secret');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const totpUrl = new URL((await person.page.locator('#spa-totp-url').getAttribute('href'))!);
    expect(totpUrl.protocol).toBe('otpauth:');
    expect(totpUrl.searchParams.get('secret')).toBe(secret);
    await spa.fill({ code: appCode(secret, Date.now()) === '000000' ? '111111' : '000000' });
    await spa.press('Activate');
    expect(await spa.formErrors()).toEqual(['Incorrect code.']);
    await screenshot(person.page, 'totp-wrong-code');
    const activation = await freshCode(secret, 5_000);
    await spa.fill({ code: activation.code });
    await spa.press('Activate');
    await spa.sees('Authenticator app', 'totp-active', 'Authenticator app activated.');
    expect(await spa.text('#spa-totp-status')).toBe('Active');
    expect(await spa.text('#spa-recovery-unused')).toBe('10 of 10 unused.');
    await spa.press('Show recovery codes');
    const recoveryCodes = person.page.locator('#spa-recovery-codes li');
    await recoveryCodes.first().waitFor();
    await screenshot(person.page, 'recovery-codes');
    const shownCodes = (await recoveryCodes.allInnerTexts()).map((code) => code.trim());
    expect(shownCodes).toHaveLength(10);
    for (const code of shownCodes) expect(code).toMatch(/^\d{8}$/);

    // Add a second address, ten minutes after signing in: the API asks who it is first.
    await ageLogin(site, databasePath, person, 10 * 60);
    await person.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Account' }).click();
    await spa.sees('Your account', 'account-before-adding');
    await spa.fill({ email: second }, 'Add an email address');
    await spa.press('Add email');
    await spa.sees('Confirm it is you', 'reauthenticate-prompt');
    await spa.fill({ password: 'not-the-password' }, 'Confirm with password');
    await spa.press('Confirm');
    expect(await spa.formErrors()).toEqual(['Incorrect password.']);
    await spa.fill({ password: ada.password }, 'Confirm with password');
    await spa.press('Confirm');
    // Confirmed, the app sent the same change again.
    await spa.sees('Your account', 'address-added', `Confirmation email sent to ${second}.`);
    expect(await spa.addresses()).toEqual([`${ada.email}: Primary, Verified`, `${second}: Unverified`]);

    // Sending the link again at once is refused (one a key per three minutes), and said so.
    await person.page.getByRole('button', { name: `Send the confirmation email to ${second} again` }).click();
    await person.page.locator('main > .errors li').first().waitFor();
    await spa.sees('Your account', 'resend-too-soon');
    expect(await person.page.locator('main > .errors li').allInnerTexts()).toEqual(['A confirmation email was sent to this address a moment ago. Please wait a few minutes before asking again.']);

    // Confirm it from its mail (signed in, the app goes back to the account), make it primary, remove the first.
    const secondMail = await waitForEmail(site.smtp, { to: second, subject: CONFIRM_SUBJECT });
    await spa.open(mailedAppRoute(secondMail), 'Confirm email address', 'verify-second');
    expect(await spa.text('#spa-verify-info')).toBe(`Please confirm that ${second} is an email address for the account ${ada.username}.`);
    await spa.press('Confirm');
    await spa.sees('Your account', 'second-confirmed', `You have confirmed ${second}.`);
    expect(await spa.addresses()).toEqual([`${ada.email}: Primary, Verified`, `${second}: Verified`]);
    await person.page.getByRole('button', { name: `Make ${second} primary` }).click();
    await spa.sees('Your account', 'second-primary', `${second} is now your primary email address.`);
    expect(await spa.addresses()).toEqual([`${second}: Primary, Verified`, `${ada.email}: Verified`]);
    await person.page.getByRole('button', { name: `Remove ${ada.email}` }).click();
    await spa.sees('Your account', 'first-removed', `Removed ${ada.email}.`);
    expect(await spa.addresses()).toEqual([`${second}: Primary, Verified`]);

    // Sign out; signing in again stops at the code step (also after a reload) until the app's code is given.
    await person.page.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out' }).click();
    await spa.sees('Sign in', 'signed-out', 'You have signed out.');
    await spa.fill({ login: ada.username, password: ada.password });
    await spa.press('Sign in');
    await spa.sees('Two-factor authentication', 'code-step');
    await person.page.reload();
    await spa.sees('Two-factor authentication', 'code-step-after-reload');
    expect(await spa.navLinks()).toEqual(['Sign in', 'Sign up']);
    // The activation's code is used up: the next step's code is the first that can sign in.
    const nextStepAt = (activation.step + 1) * PERIOD_MS;
    if (Date.now() < nextStepAt + 500) await sleep(nextStepAt + 500 - Date.now());
    const login = await freshCode(secret, 3_000);
    expect(login.step).toBeGreaterThan(activation.step);
    await spa.fill({ code: login.code });
    await spa.press('Sign in');
    await spa.sees('Your account', 'signed-in-with-code');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${ada.username}.`);
    expect(await spa.addresses()).toEqual([`${second}: Primary, Verified`]);

    // Just signed in, so turning the app off asks nothing more; the app offers a new secret at once.
    await person.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Two-factor authentication' }).click();
    await spa.sees('Authenticator app', 'totp-after-login');
    expect(await spa.text('main')).toMatch(/Last used \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
    await spa.press('Deactivate');
    await spa.sees('Activate authenticator app', 'totp-deactivated', 'Authenticator app deactivated.');
    expect(await spa.text('#spa-totp-secret')).not.toBe(secret);

    await person.page.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out' }).click();
    await spa.sees('Sign in', 'signed-out-again', 'You have signed out.');
    probing = true;
    const session = await person.page.evaluate(async (url) => (await fetch(url, { credentials: 'same-origin' })).status, `${API}/auth/session`);
    probing = false;
    expect(session).toBe(401);

    // Every change the app sent carried the CSRF cookie's value in X-CSRFToken.
    const sent = await Promise.all(changes);
    expect(sent.map((change) => `${change.method} ${new URL(change.url).pathname.replace(API, '')}`)).toEqual([
      'POST /auth/signup',
      'POST /auth/email/verify',
      'POST /auth/login',
      'POST /account/authenticators/totp',
      'POST /account/authenticators/totp',
      'POST /account/email',
      'POST /auth/reauthenticate',
      'POST /auth/reauthenticate',
      'POST /account/email',
      'PUT /account/email',
      'POST /auth/email/verify',
      'PATCH /account/email',
      'DELETE /account/email',
      'DELETE /auth/session',
      'POST /auth/login',
      'POST /auth/2fa/authenticate',
      'DELETE /account/authenticators/totp',
      'DELETE /auth/session',
    ]);
    for (const change of sent) {
      const cookie = /(?:^|;\s*)csrftoken=([^;]+)/.exec(change.headers.cookie ?? '')?.[1];
      expect(cookie, `${change.method} ${change.url}`).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(change.headers['x-csrftoken'], `${change.method} ${change.url}`).toBe(cookie);
      // A body is JSON; a change without one (signing out, turning the app off) sends no content type.
      expect(change.headers['content-type'], `${change.method} ${change.url}`).toBe(change.body === null ? undefined : 'application/json');
    }
    await person.close();
  }, SPA_JOURNEY_TIMEOUT_MS);

  it('asks for no username where the site signs in by email', async () => {
    const { email, password } = newAccount('grace');
    const person = await Person.open(browser, emailSite);
    const spa = new SpaUser(person.page);
    await spa.open('/spa/#/signup', 'Sign up', 'email-project-signup');
    const inputs = await person.page.locator('main form input').all();
    expect(await Promise.all(inputs.map((input) => input.getAttribute('name')))).toEqual(['email', 'password']);
    await spa.fill({ email, password });
    await spa.press('Sign up');
    await spa.sees('Verify your email address', 'email-project-verify-step');

    const mail = await waitForEmail(emailSite.smtp, { to: email, subject: CONFIRM_SUBJECT });
    await spa.open(mailedAppRoute(mail), 'Confirm email address', 'email-project-verify-key');
    expect(await spa.text('#spa-verify-info')).toBe(`Please confirm that ${email} is an email address for the account ${email}.`);
    await spa.press('Confirm');
    await spa.sees('Sign in', 'email-project-confirmed', `You have confirmed ${email}.`);
    expect(await person.page.locator('main form').getByLabel('Email', { exact: true }).getAttribute('name')).toBe('login');
    await spa.fill({ login: email, password });
    await spa.press('Sign in');
    await spa.sees('Your account', 'email-project-signed-in');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${email}.`);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
