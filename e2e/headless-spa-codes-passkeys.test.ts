/**
 * The example site's single-page app (examples/site/spa/) with mailed codes and passkeys, driven in
 * Chromium against the running site with a real SMTP server and the DevTools virtual
 * authenticator (virtual-authenticator.ts), which answers the browser's WebAuthn prompts as a
 * person touching the sensor would: the app's own script (spa/webauthn.js) runs the ceremonies
 * against the headless API.
 *
 * - The example site as generated (login by code, security keys, passkey login on): a person
 *   signs in with a mailed code, registers a passkey from the app, renames it, signs out and signs
 *   in with the passkey alone.
 * - A security key as a second factor: asked for after the password, used to confirm an old
 *   login before it is removed; then the password alone signs in again.
 * - The site as allauth's example backend runs (mandatory verification by code, passkey signup):
 *   a person signs up with an address and a passkey, no password, confirming the address with the
 *   mailed code, confirms a second address with its code, and signs in with the passkey after
 *   signing out.
 *
 * The sites are visited as http://localhost:PORT: Chromium refuses an IP address as a WebAuthn
 * relying party id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsEnabled, expectNoConsoleErrors, screenshot, type RunningSite, type TestSmtpServer } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, ageLogin, newAccount, startSitesAndBrowser, uniqueName, waitForEmail } from './journey.js';
import { VirtualAuthenticator } from './virtual-authenticator.js';

/** The app routes on the API's statuses: a failed API call is part of its course (see headless-spa.test.ts). */
const EXPECTED_API_STATUSES = [/^console error at http:\/\/localhost:\d+\/_allauth\/browser\/v1\/\S+: Failed to load resource: the server responded with a status of (400|401|403|404|409|429) /];
const SUBJECTS = { loginCode: 'Your sign-in code', confirm: 'Please confirm your email address' };
/** allauth's codes: six letters and digits, on a line of their own in the mail. */
const MAILED_CODE = /^\s*([A-Z0-9]{6})\s*$/m;
const NO_PASSKEY = 'The security key did not answer, or the request was cancelled. Please try again.';

/** allauth's example backend, less what the journeys here do not need (login by email). */
const EXAMPLE_BACKEND_ENV: Record<string, string> = {
  LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  LATCHKEY_ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: 'true',
  LATCHKEY_MFA_PASSKEY_SIGNUP_ENABLED: 'true',
};

/** The newest mail's code, once a mail with this subject has come. */
async function mailedCode(smtp: TestSmtpServer, to: string, subject: string, count = 1): Promise<string> {
  const mail = await waitForEmail(smtp, { to, subject }, { count });
  const code = MAILED_CODE.exec(mail.text)?.[1];
  if (!code) throw new Error(`No code in the mail "${mail.subject}":\n${mail.text}`);
  return code;
}

/** What one person at the app sees and does; every view is screenshotted and checked for console errors. */
class SpaUser {
  constructor(readonly page: Page) {}

  async sees(heading: string, shot: string, message?: string): Promise<void> {
    await this.page.locator('main:not([aria-busy]) > h1', { hasText: new RegExp(`^${heading}$`) }).waitFor({ timeout: 15_000 });
    if (message !== undefined) await this.page.locator('main .message', { hasText: message }).first().waitFor({ timeout: 15_000 });
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

  async follow(link: string): Promise<void> {
    await this.page.locator('main').getByRole('link', { name: link, exact: true }).click();
  }

  /** The errors shown in the view's forms (not the view's own, above its heading). */
  async formErrors(): Promise<string[]> {
    const errors = this.page.locator('main form .errors li');
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

  /** The keys table as a person reads it: `name: kind, last used`. */
  async keys(): Promise<string[]> {
    const rows = await this.page.locator('#spa-keys tbody tr').all();
    return Promise.all(rows.map(async (row) => {
      const cells = (await row.locator('td').allInnerTexts()).map((cell) => cell.trim());
      return `${cells[0]}: ${cells[1]}, ${/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/.test(cells[3] ?? '') ? 'used' : cells[3]}`;
    }));
  }

  async signOut(shot: string): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Account' }).getByRole('button', { name: 'Sign out' }).click();
    await this.sees('Sign in', shot, 'You have signed out.');
  }

  /** From the account view to the keys, then a key added by name (a passkey or not). */
  async addKey(name: string, passkey: boolean, shot: string): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Account' }).click();
    await this.sees('Your account', `${shot}-account`);
    await this.follow('Manage your security keys and passkeys');
    await this.sees('Security keys', `${shot}-keys`);
    await this.fill({ name }, 'Add a security key');
    await this.page.getByRole('form', { name: 'Add a security key' }).locator('[name="passkey"]').setChecked(passkey);
    await this.press('Add security key');
  }
}

describe.runIf(browserTestsEnabled())('the single-page app with mailed codes and passkeys', () => {
  let site: RunningSite;
  /** The site as allauth's example backend runs: mandatory verification by code, passkey signup. */
  let backendSite: RunningSite;
  let browser: Browser;
  // The first site's database is the test's own file, so that a journey can age a login (see ageLogin).
  let directory: string | undefined;
  let databasePath: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'lk-e2e-spa-passkeys-'));
    databasePath = join(directory, 'db.sqlite3');
    let sites: RunningSite[];
    ({ sites, browser } = await startSitesAndBrowser([
      { hostname: 'localhost', env: { DATABASE_URL: `sqlite:${databasePath}` } },
      { hostname: 'localhost', env: EXAMPLE_BACKEND_ENV },
    ]));
    [site, backendSite] = sites as [RunningSite, RunningSite];
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop(), backendSite?.stop()]);
    if (directory) rmSync(directory, { recursive: true, force: true });
  }, SETUP_TIMEOUT_MS);

  it('signs in with a mailed code, registers a passkey, renames it, signs out and signs in with the passkey alone', async () => {
    const ada = newAccount('ada');
    const person = await Person.open(browser, site);
    const spa = new SpaUser(person.page);
    const authenticator = await VirtualAuthenticator.attach(person.page);

    // An account to sign in to (verification is optional on this site: signing up signs in). The
    // site verifies addresses by link, so it takes no signups with a passkey, and the app offers none.
    await spa.open('/spa/#/signup', 'Sign up', 'signup');
    expect(await person.page.locator('#spa-passkey-signup-link').count()).toBe(0);
    await spa.fill({ email: ada.email, username: ada.username, password: ada.password });
    await spa.press('Sign up');
    await spa.sees('Your account', 'signed-up');
    await spa.signOut('signed-out-after-signup');

    // Before there is a passkey, the browser finds none: its refusal is the button's error.
    await spa.press('Sign in with a passkey');
    expect(await spa.formErrors()).toEqual([NO_PASSKEY]);
    await screenshot(person.page, 'no-passkey-yet');

    // "Mail me a sign-in code": the address, then the code from the mail (a wrong one first).
    await spa.follow('Mail me a sign-in code');
    await spa.sees('Mail me a sign-in code', 'request-code');
    await spa.fill({ email: ada.email });
    await spa.press('Request code');
    await spa.sees('Enter your sign-in code', 'code-step', `If ${ada.email} has an account here, a sign-in code is on its way.`);
    const code = await mailedCode(site.smtp, ada.email, SUBJECTS.loginCode);
    // A reload asks the API again: the login still waits for its code.
    await person.page.reload();
    await spa.sees('Enter your sign-in code', 'code-step-after-reload');
    await spa.fill({ code: code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA' });
    await spa.press('Sign in');
    expect(await spa.formErrors()).toEqual(['Incorrect code.']);
    await spa.fill({ code });
    await spa.press('Sign in');
    await spa.sees('Your account', 'signed-in-with-code');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${ada.username}.`);

    // A passkey: the code proved the address, and the login is recent, so nothing more is asked.
    await spa.addKey('This laptop', true, 'passkey');
    await spa.sees('Security keys', 'passkey-added', 'Passkey added.');
    expect(await spa.keys()).toEqual(['This laptop: Passkey, Not used yet']);
    expect(await spa.text('#spa-recovery-unused')).toBe('10 of 10 unused.');
    const [credential, ...others] = await authenticator.credentials();
    expect(others).toEqual([]);
    expect(credential).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });

    await person.page.getByRole('button', { name: 'Rename This laptop' }).click();
    await spa.fill({ name: 'Work laptop' }, 'Rename This laptop');
    await spa.press('Save name');
    await spa.sees('Security keys', 'passkey-renamed', 'Renamed This laptop to Work laptop.');
    expect(await spa.keys()).toEqual(['Work laptop: Passkey, Not used yet']);

    // No address, no password: the passkey alone, and it counts as both factors.
    await spa.signOut('signed-out');
    await spa.press('Sign in with a passkey');
    await spa.sees('Your account', 'signed-in-with-passkey');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${ada.username}.`);
    expect((await authenticator.credentials())[0]!.signCount).toBeGreaterThan(credential!.signCount);
    await person.page.goto('/spa/#/account/keys');
    await spa.sees('Security keys', 'keys-after-passkey-login');
    expect(await spa.keys()).toEqual(['Work laptop: Passkey, used']);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('asks for a security key after the password, confirms an old login with it, and removes it', async () => {
    const bea = newAccount('bea');
    const person = await Person.open(browser, site);
    const spa = new SpaUser(person.page);
    await VirtualAuthenticator.attach(person.page);

    // Signed up and in; a key needs a verified address, which the mailed sign-in code proves.
    await spa.open('/spa/#/signup', 'Sign up', 'signup');
    await spa.fill({ email: bea.email, username: bea.username, password: bea.password });
    await spa.press('Sign up');
    await spa.sees('Your account', 'signed-up');
    await spa.addKey('Blue key', false, 'unverified');
    expect(await spa.formErrors()).toEqual(['Verify your email address before you add a security key.']);
    await spa.signOut('signed-out-to-verify');
    await spa.follow('Mail me a sign-in code');
    await spa.sees('Mail me a sign-in code', 'request-code');
    await spa.fill({ email: bea.email });
    await spa.press('Request code');
    await spa.sees('Enter your sign-in code', 'code-step');
    await spa.fill({ code: await mailedCode(site.smtp, bea.email, SUBJECTS.loginCode) });
    await spa.press('Sign in');
    await spa.sees('Your account', 'signed-in-with-code');

    await spa.addKey('Blue key', false, 'security-key');
    await spa.sees('Security keys', 'key-added', 'Security key added.');
    expect(await spa.keys()).toEqual(['Blue key: Security key, Not used yet']);

    // The password is no longer enough: the login waits for the key (or a recovery code).
    await spa.signOut('signed-out');
    await spa.fill({ login: bea.username, password: bea.password });
    await spa.press('Sign in');
    await spa.sees('Two-factor authentication', 'second-step');
    expect(await spa.text('main > p')).toBe('Use your security key, or enter one of your recovery codes.');
    await spa.press('Use a security key');
    await spa.sees('Your account', 'signed-in-with-key');

    // Ten minutes later, removing the key asks who it is; the key answers.
    await ageLogin(site, databasePath, person, 10 * 60);
    await person.page.goto('/spa/#/account/keys');
    await spa.sees('Security keys', 'keys-list');
    expect(await spa.keys()).toEqual(['Blue key: Security key, used']);
    await person.page.getByRole('button', { name: 'Remove Blue key' }).click();
    await spa.sees('Confirm it is you', 'remove-asks-reauthentication');
    await spa.press('Confirm with a security key');
    await spa.sees('Security keys', 'key-removed', 'Removed Blue key.');
    expect(await person.page.locator('#spa-no-keys').isVisible()).toBe(true);

    // The password alone signs in again.
    await spa.signOut('signed-out-after-removal');
    await spa.fill({ login: bea.username, password: bea.password });
    await spa.press('Sign in');
    await spa.sees('Your account', 'password-only');
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('signs up with an address and a passkey, the address confirmed by its mailed code, and signs in with the passkey', async () => {
    const cleo = newAccount('cleo');
    const person = await Person.open(browser, backendSite);
    const spa = new SpaUser(person.page);
    const authenticator = await VirtualAuthenticator.attach(person.page);

    await spa.open('/spa/#/signup', 'Sign up', 'signup');
    await spa.follow('Sign up with a passkey');
    await spa.sees('Sign up with a passkey', 'passkey-signup');
    await spa.fill({ email: cleo.email, username: cleo.username });
    await spa.press('Sign up');
    // Verification is by code here: the app asks for the code rather than a click on a link.
    await spa.sees('Verify your email address', 'verify-by-code');
    const code = await mailedCode(backendSite.smtp, cleo.email, SUBJECTS.confirm);
    // A new code at once is refused by the resend limit, and the step stays.
    await spa.press('Send a new code');
    await person.page.locator('main > .errors li').first().waitFor({ timeout: 15_000 });
    await spa.sees('Verify your email address', 'resend-too-soon');
    expect(await person.page.locator('main > .errors li').allInnerTexts()).toEqual(['A confirmation email was sent to this address a moment ago. Please wait a few minutes before asking again.']);
    await spa.fill({ code: code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA' });
    await spa.press('Confirm');
    expect(await spa.formErrors()).toEqual(['Incorrect code.']);
    await spa.fill({ code });
    await spa.press('Confirm');
    await spa.sees('Create your passkey', 'create-passkey', 'You have confirmed your email address.');
    // A reload asks the API again: the signup still waits for its passkey.
    await person.page.reload();
    await spa.sees('Create your passkey', 'create-passkey-after-reload');
    await spa.fill({ name: 'Cleo\'s phone' });
    await spa.press('Create passkey');
    await spa.sees('Your account', 'signed-up-with-passkey');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${cleo.username}.`);
    expect(await authenticator.credentials()).toHaveLength(1);

    await person.page.goto('/spa/#/account/keys');
    await spa.sees('Security keys', 'keys');
    expect(await spa.keys()).toEqual(['Cleo\'s phone: Passkey, Not used yet']);

    // Another address, confirmed with the code mailed to it, in the account view.
    const second = `${uniqueName('cleo')}@example.org`;
    await person.page.goto('/spa/#/account');
    await spa.sees('Your account', 'account');
    await spa.fill({ email: second }, 'Add an email address');
    await spa.press('Add email');
    await spa.sees('Your account', 'address-added', `Confirmation email sent to ${second}.`);
    expect(await spa.addresses()).toEqual([`${cleo.email}: Primary, Verified`, `${second}: Unverified`]);
    await spa.fill({ code: await mailedCode(backendSite.smtp, second, SUBJECTS.confirm) }, 'Confirm an address with its code');
    await spa.press('Confirm address');
    await spa.sees('Your account', 'address-confirmed', 'You have confirmed the address.');
    expect(await spa.addresses()).toEqual([`${cleo.email}: Primary, Verified`, `${second}: Verified`]);

    await spa.signOut('signed-out');
    await spa.press('Sign in with a passkey');
    await spa.sees('Your account', 'signed-in-with-passkey');
    expect(await spa.text('#spa-signed-in')).toBe(`Signed in as ${cleo.username}.`);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
