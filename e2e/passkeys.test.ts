/**
 * Passkeys and security keys on the example site, end to end in Chromium with its DevTools virtual
 * authenticator (virtual-authenticator.ts), which answers the browser's prompts as a person
 * touching the sensor would: the pages' script (static/webauthn.js) runs the real ceremonies.
 *
 * - A passkey: registered from the 2FA pages, then the person signs out and back in with it alone,
 *   no username or password (on PostgreSQL when there is one, else SQLite: the pages and flows
 *   behind it are tested on both databases without a browser).
 * - A security key as a second factor: asked for after the password, used to reauthenticate an
 *   old login, then removed, after which the password alone signs in again.
 * - Passkey signup: an address and a username, the mailed code, then the passkey, never a password.
 *
 * The site is visited as http://localhost:PORT: Chromium refuses an IP address as a WebAuthn
 * relying party id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsEnabled, linkFromEmail, deployedDatabase, type RunningSite, type StartSiteOptions } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, ageLogin, expectMessage, newAccount, startSiteAndBrowser, waitForEmail, type Account } from './journey.js';
import { VirtualAuthenticator } from './virtual-authenticator.js';

const PASSKEY_SETTINGS: Record<string, string> = {
  LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional',
  LATCHKEY_MFA_SUPPORTED_TYPES: 'totp,recovery_codes,webauthn',
  LATCHKEY_MFA_PASSKEY_LOGIN_ENABLED: 'true',
};
const SUBJECTS = {
  confirm: 'Please confirm your email address',
  added: 'A security key was added to your account',
  removed: 'A security key was removed from your account',
};

function siteOptions(env: Record<string, string> = {}, database?: StartSiteOptions['database']): StartSiteOptions {
  return { hostname: 'localhost', env: { ...PASSKEY_SETTINGS, ...env }, ...(database ? { database } : {}) };
}

/** Signs up, confirms the address from the mail (a key needs a verified address), and is signed in. */
async function signUpAndConfirm(person: Person, site: RunningSite, account: Account): Promise<void> {
  await person.signUp(account);
  expect(person.pathname()).toBe(`/users/${account.username}/`);
  const mail = await waitForEmail(site.smtp, { to: account.email, subject: SUBJECTS.confirm });
  await person.visit(linkFromEmail(mail, '/accounts/confirm-email/'), 'confirm-page');
  await person.press('Confirm', 'address-confirmed');
  await expectMessage(person, `You have confirmed ${account.email}.`);
}

/** From the 2FA overview to the add page, the name typed, the passkey box as asked, the key made. */
async function addKey(person: Person, name: string, passkey: boolean, shot: string): Promise<void> {
  await person.visit('/accounts/2fa/', `${shot}-mfa-index`);
  const section = person.page.locator('section', { has: person.page.locator('#mfa-webauthn-heading') });
  expect(await person.page.locator('#mfa-webauthn-status').innerText()).toBe('Inactive');
  await person.follow('Add', `${shot}-add-form`, section);
  expect(person.pathname()).toBe('/accounts/2fa/webauthn/add/');
  expect(await person.heading()).toBe('Add a security key');
  await person.fill({ name, passwordless: passkey });
  await person.press('Add security key', `${shot}-added`);
  // The first key comes with recovery codes, shown at once, as after an authenticator app.
  expect(person.pathname()).toBe('/accounts/2fa/recovery-codes/');
  await expectMessage(person, 'Security key added.');
  expect(await person.page.locator('#mfa-recovery-codes li').count()).toBe(10);
}

async function signOut(person: Person, shot: string): Promise<void> {
  await person.visit('/accounts/logout/', `${shot}-confirmation`);
  await person.press('Sign out', shot, person.page.locator('main'));
  expect(await person.text()).toContain('You are not signed in.');
}

describe.runIf(browserTestsEnabled()).each([deployedDatabase()])('passkeys in Chromium, on %s', (database) => {
  let site: RunningSite;
  let browser: Browser;

  beforeAll(async () => {
    ({ site, browser } = await startSiteAndBrowser(siteOptions({}, database)));
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop()]);
  }, SETUP_TIMEOUT_MS);

  it('registers a passkey, signs out, and signs in with the passkey alone', async () => {
    const ada = newAccount('ada');
    const person = await Person.open(browser, site);
    expect(new URL(site.url).hostname).toBe('localhost');
    const authenticator = await VirtualAuthenticator.attach(person.page);
    // Before there is a passkey, the button finds none: the browser's refusal is the form's error.
    await person.visit('/accounts/login/', 'login-without-passkey');
    await person.page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const refusal = person.page.locator('#passkey-login [data-webauthn-error]');
    await refusal.waitFor({ timeout: 15_000 });
    expect(await refusal.innerText()).toBe('The security key did not answer, or the request was cancelled. Please try again.');
    expect(person.pathname()).toBe('/accounts/login/');
    await signUpAndConfirm(person, site, ada);

    await addKey(person, 'This laptop', true, 'passkey');
    const [credential, ...others] = await authenticator.credentials();
    expect(others).toEqual([]);
    expect(credential).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });
    await waitForEmail(site.smtp, { to: ada.email, subject: SUBJECTS.added });

    await person.visit('/accounts/2fa/webauthn/', 'keys-list');
    expect(await person.heading()).toBe('Security keys');
    const row = person.page.locator('#mfa-webauthn-keys tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').nth(0).innerText()).toBe('This laptop');
    expect(await row.locator('td').nth(1).innerText()).toBe('Passkey');
    expect(await row.locator('td').nth(3).innerText()).toBe('Not used yet');

    await signOut(person, 'signed-out');
    await person.visit('/accounts/login/', 'login-page');
    // No username, no password: the button alone.
    await person.press('Sign in with a passkey', 'signed-in-with-passkey');
    expect(person.pathname()).toBe(`/users/${ada.username}/`);
    expect(await person.messages()).toEqual([`Successfully signed in as ${ada.username}.`]);
    expect((await authenticator.credentials())[0]!.signCount).toBeGreaterThan(credential!.signCount);

    // A passkey counts as both factors: no second step was asked, and the key was used.
    await person.visit('/accounts/2fa/webauthn/', 'keys-list-after-login');
    expect(await row.locator('td').nth(3).innerText()).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M UTC$/);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});

describe.runIf(browserTestsEnabled())('a security key as a second factor in Chromium', () => {
  let site: RunningSite;
  let browser: Browser;
  // The site's database is the test's own file, so that the journey can age a login (see ageLogin).
  let directory: string | undefined;
  let databasePath: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'lk-e2e-passkeys-'));
    databasePath = join(directory, 'db.sqlite3');
    ({ site, browser } = await startSiteAndBrowser(siteOptions({ DATABASE_URL: `sqlite:${databasePath}` })));
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop()]);
    if (directory) rmSync(directory, { recursive: true, force: true });
  }, SETUP_TIMEOUT_MS);

  it('asks for the key after the password, confirms an old login with it, and is removed', async () => {
    const bea = newAccount('bea');
    const person = await Person.open(browser, site);
    await VirtualAuthenticator.attach(person.page);
    await signUpAndConfirm(person, site, bea);
    await addKey(person, 'Blue key', false, 'security-key');

    // The password is no longer enough: the login waits for the key.
    await signOut(person, 'signed-out');
    await person.signIn(bea.username, bea.password, { shot: 'password' });
    expect(person.pathname()).toBe('/accounts/2fa/authenticate/');
    expect(await person.text()).toContain('Use your security key, or enter one of your recovery codes.');
    expect(await person.homeStatus('not-yet-signed-in')).toContain('You are not signed in.');
    await person.visit('/accounts/2fa/authenticate/', 'second-step');
    await person.press('Use a security key', 'signed-in-with-key');
    expect(person.pathname()).toBe(`/users/${bea.username}/`);
    expect(await person.messages()).toEqual([`Successfully signed in as ${bea.username}.`]);

    // Six minutes later, removing the key asks who it is: the key answers.
    await ageLogin(site, databasePath, person, 6 * 60);
    await person.visit('/accounts/2fa/webauthn/', 'keys-list');
    await person.follow('Remove Blue key', 'remove-asks-reauthentication', person.page.locator('main'));
    expect(person.pathname()).toBe('/accounts/reauthenticate/');
    await person.follow('Use a security key or another second factor instead', 'mfa-reauthenticate');
    expect(person.pathname()).toBe('/accounts/2fa/reauthenticate/');
    await person.press('Use a security key', 'remove-confirmation');
    expect(person.pathname()).toMatch(/^\/accounts\/2fa\/webauthn\/keys\/\d+\/remove\/$/);
    expect(await person.heading()).toBe('Remove security key');
    expect(await person.text()).toContain('your recovery codes will be deleted as well');
    await person.press('Remove', 'removed');
    expect(person.pathname()).toBe('/accounts/2fa/webauthn/');
    await expectMessage(person, 'Security key removed.');
    expect(await person.page.locator('#mfa-webauthn-none').isVisible()).toBe(true);
    await waitForEmail(site.smtp, { to: bea.email, subject: SUBJECTS.removed });

    // The password alone signs in again.
    await signOut(person, 'signed-out-after-removal');
    await person.signIn(bea.username, bea.password, { shot: 'password-only' });
    expect(person.pathname()).toBe(`/users/${bea.username}/`);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});

describe.runIf(browserTestsEnabled())('passkey signup in Chromium', () => {
  let site: RunningSite;
  let browser: Browser;

  beforeAll(async () => {
    const signup = { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory', LATCHKEY_ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: 'true', LATCHKEY_MFA_PASSKEY_SIGNUP_ENABLED: 'true' };
    ({ site, browser } = await startSiteAndBrowser(siteOptions(signup)));
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop()]);
  }, SETUP_TIMEOUT_MS);

  it('signs up with an address, the mailed code and a passkey, then signs in with the passkey', async () => {
    const cleo = newAccount('cleo');
    const person = await Person.open(browser, site);
    const authenticator = await VirtualAuthenticator.attach(person.page);
    await person.visit('/accounts/signup/', 'signup-page');
    await person.follow('Sign up using a passkey', 'passkey-signup-form', person.page.locator('main'));
    expect(person.pathname()).toBe('/accounts/signup/passkey/');
    expect(await person.page.locator('[name=password1]').count()).toBe(0);
    await person.fill({ email: cleo.email, username: cleo.username });
    await person.press('Sign up', 'code-form');
    expect(person.pathname()).toBe('/accounts/confirm-email/');

    const mail = await waitForEmail(site.smtp, { to: cleo.email, subject: SUBJECTS.confirm });
    const code = /enter this code where you were asked for it:\s+(\S+)/.exec(mail.text)?.[1];
    expect(code).toBeDefined();
    await person.fill({ code: code! });
    await person.press('Confirm', 'passkey-step');
    expect(person.pathname()).toBe('/accounts/2fa/webauthn/signup/');
    expect(await person.heading()).toBe('Create your passkey');
    await person.fill({ name: 'My phone' });
    await person.press('Create passkey', 'signed-up');
    expect(person.pathname()).toBe(`/users/${cleo.username}/`);
    expect(await authenticator.credentials()).toMatchObject([{ isResidentCredential: true, rpId: 'localhost' }]);

    await signOut(person, 'signed-out');
    await person.visit('/accounts/login/', 'login-page');
    await person.press('Sign in with a passkey', 'signed-in-with-passkey');
    expect(person.pathname()).toBe(`/users/${cleo.username}/`);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
