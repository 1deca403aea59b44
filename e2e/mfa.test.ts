/**
 * Two-factor authentication on the example site, end to end: an authenticator app activated from
 * the key the page shows (the codes computed here, as an app would, with otpauth), the recovery
 * codes it comes with, logins that stop at the code page and go on with an app code or a recovery
 * code (each code working once), new recovery codes and deactivation behind a reauthentication
 * (by code, then by password), and the notices mailed at each change.
 *
 * The site runs on the real clock with MFA_TOTP_TOLERANCE 0, so the journey waits for time steps
 * (at most twice): see `freshCode` (authenticator-app.ts) and before the app-code login.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appCode, freshCode, PERIOD_MS, sleep, stepAt } from './authenticator-app.js';
import { browserTestsEnabled, linkFromEmail, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, ageLogin, expectMessage, newAccount, startSiteAndBrowser, waitForEmail, type Account } from './journey.js';

const RECOVERY_CODE_COUNT = 10;
const INCORRECT_CODE = 'Incorrect code.';
/** The journey waits for time steps in real time (up to 12 s + one step), on top of what any journey may take. */
const MFA_JOURNEY_TIMEOUT_MS = JOURNEY_TIMEOUT_MS + 12_000 + PERIOD_MS;

const SUBJECTS = {
  confirm: 'Please confirm your email address',
  activated: 'Two-factor authentication was turned on for your account',
  regenerated: 'New recovery codes were generated for your account',
  deactivated: 'Two-factor authentication was turned off for your account',
};

describe.runIf(browserTestsEnabled())('two-factor authentication', () => {
  let site: RunningSite;
  let browser: Browser;
  // The site's database is the test's own file, so that the journey can age a login (see ageLogin).
  let directory: string | undefined;
  let databasePath: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'lk-e2e-mfa-'));
    databasePath = join(directory, 'db.sqlite3');
    ({ site, browser } = await startSiteAndBrowser({
      env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional', DATABASE_URL: `sqlite:${databasePath}` },
    }));
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop()]);
    if (directory) rmSync(directory, { recursive: true, force: true });
  }, SETUP_TIMEOUT_MS);

  async function signOut(person: Person, shot: string): Promise<void> {
    await person.visit('/accounts/logout/', `${shot}-confirmation`);
    await person.press('Sign out', shot, person.page.locator('main'));
    expect(await person.text()).toContain('You are not signed in.');
  }

  /** The password step of a login by an account with an authenticator app: it stops at the code page. */
  async function passwordThenCodePage(person: Person, account: Account, shot: string): Promise<void> {
    await person.signIn(account.username, account.password, { shot });
    expect(person.pathname()).toBe('/accounts/2fa/authenticate/');
    expect(await person.heading()).toBe('Two-factor authentication');
    expect(await person.text()).toContain('Enter the code your authenticator app shows now, or one of your recovery codes.');
  }

  async function enterCode(person: Person, code: string, shot: string) {
    await person.fill({ code });
    return person.press('Sign in', shot, person.page.locator('form', { has: person.page.locator('[name=code]') }));
  }

  async function expectSignedInAfterCode(person: Person, account: Account): Promise<void> {
    // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
    expect(person.pathname()).toBe(`/users/${account.username}/`);
    expect(await person.messages()).toEqual([`Successfully signed in as ${account.username}.`]);
    expect(await person.heading()).toBe(account.username);
  }

  async function recoveryCodesShown(person: Person): Promise<string[]> {
    return (await person.page.locator('#mfa-recovery-codes li code').allTextContents()).map((code) => code.trim());
  }

  it('activates an authenticator app, signs in with app and recovery codes (each once), renews the codes and deactivates it', async () => {
    const ada = newAccount('ada');
    const person = await Person.open(browser, site);
    await person.signUp(ada);
    expect(person.pathname()).toBe(`/users/${ada.username}/`);

    // From the header. With the address not verified yet, the app cannot be activated.
    await person.follow('Two-factor authentication', 'mfa-index-inactive', person.nav());
    expect(person.pathname()).toBe('/accounts/2fa/');
    expect(await person.heading()).toBe('Two-factor authentication');
    expect(await person.page.locator('#mfa-totp-status').innerText()).toBe('Inactive');
    await person.follow('Activate', 'activate-unverified', person.page.locator('main'));
    expect(person.pathname()).toBe('/accounts/2fa/totp/activate/');
    expect(await person.page.locator('#mfa-unverified').innerText()).toContain('You must verify your email address');
    expect(await person.page.locator('#mfa-totp-secret').count()).toBe(0);

    const confirmMail = await waitForEmail(site.smtp, { to: ada.email, subject: SUBJECTS.confirm });
    await person.visit(linkFromEmail(confirmMail, '/accounts/confirm-email/'), 'confirm-page');
    await person.press('Confirm', 'address-confirmed');
    await expectMessage(person, `You have confirmed ${ada.email}.`);

    // Activation. Just signed up (a login), so no reauthentication is asked.
    await person.visit('/accounts/2fa/', 'mfa-index-verified');
    await person.follow('Activate', 'activate-form', person.page.locator('main'));
    expect(person.pathname()).toBe('/accounts/2fa/totp/activate/');
    expect(await person.heading()).toBe('Activate authenticator app');
    expect(await person.page.locator('#mfa-totp-qr svg').isVisible()).toBe(true);
    const secretElement = person.page.locator('#mfa-totp-secret');
    // The key is tucked away under "Can't scan?" until the person opens it.
    expect(await secretElement.isVisible()).toBe(false);
    await person.page.locator('details summary').click();
    await secretElement.waitFor({ state: 'visible' });
    const secret = (await secretElement.innerText()).trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // The link an app on this device would open carries the same key, under the site's name.
    const totpUrl = new URL((await person.page.locator('a[href^="otpauth://"]').getAttribute('href'))!);
    expect(totpUrl.searchParams.get('secret')).toBe(secret);
    expect(totpUrl.searchParams.get('issuer')).toBe('My Awesome Project');
    expect(decodeURIComponent(totpUrl.pathname)).toContain(ada.username);

    // A wrong code first: refused, and the same key is still shown (it awaits the right code).
    await person.fill({ code: appCode(secret, Date.now()) === '000000' ? '111111' : '000000' });
    const wrong = await person.press('Activate', 'activate-wrong-code');
    expect(wrong.status()).toBe(400);
    expect(await person.formErrors()).toEqual([INCORRECT_CODE]);
    await person.page.locator('details summary').click();
    expect((await secretElement.innerText()).trim()).toBe(secret);

    // The right code, with 12 s of its step left (so that the replay below falls in the same step).
    const activation = await freshCode(secret, 12_000);
    await person.fill({ code: activation.code });
    await person.press('Activate', 'recovery-codes-after-activation');
    expect(person.pathname()).toBe('/accounts/2fa/recovery-codes/');
    expect(await person.heading()).toBe('Recovery codes');
    await expectMessage(person, 'Authenticator app activated.');
    const codes = await recoveryCodesShown(person);
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(/^\d{8}$/);
    expect(await person.page.locator('#mfa-recovery-unused').innerText()).toBe(`${RECOVERY_CODE_COUNT} of ${RECOVERY_CODE_COUNT} unused; each code works once.`);

    // Sign out; the password alone now leads to the code page. The code that activated the app,
    // still in its time step, is used up: seen over a shoulder, it cannot sign in.
    await signOut(person, 'signed-out-after-activation');
    await passwordThenCodePage(person, ada, 'login-1');
    const replay = await enterCode(person, activation.code, 'activation-code-replayed');
    expect(stepAt(Date.now()), 'the replayed code should have reached the site within its own time step').toBe(activation.step);
    expect(replay.status()).toBe(400);
    expect(person.pathname()).toBe('/accounts/2fa/authenticate/');
    expect(await person.formErrors()).toEqual([INCORRECT_CODE]);

    // While the app's next code is not yet shown: a recovery code signs in, once.
    await enterCode(person, codes[0]!, 'signed-in-with-recovery-code');
    await expectSignedInAfterCode(person, ada);
    await person.follow('Two-factor authentication', 'mfa-index-active', person.nav());
    expect(await person.page.locator('#mfa-totp-status').innerText()).toBe('Active');
    expect(await person.text()).toContain('Not used to sign in yet.');
    expect(await person.page.locator('#mfa-recovery-unused').innerText()).toBe(`${RECOVERY_CODE_COUNT - 1} of ${RECOVERY_CODE_COUNT}`);
    const activatedMail = await waitForEmail(site.smtp, { to: ada.email, subject: SUBJECTS.activated });
    expect(activatedMail.text).toContain(`${site.url}/accounts/2fa/`);
    await signOut(person, 'signed-out-after-recovery-code');
    await passwordThenCodePage(person, ada, 'login-2');
    const reused = await enterCode(person, codes[0]!, 'recovery-code-reused');
    expect(reused.status()).toBe(400);
    expect(await person.formErrors()).toEqual([INCORRECT_CODE]);
    expect(await person.homeStatus('home-after-reused-code')).toContain('You are not signed in.');
    // Typed as people do, with a space in the middle: another code still works.
    await person.visit('/accounts/2fa/authenticate/', 'code-page-again');
    await enterCode(person, `${codes[1]!.slice(0, 4)} ${codes[1]!.slice(4)}`, 'signed-in-with-second-recovery-code');
    await expectSignedInAfterCode(person, ada);
    await signOut(person, 'signed-out-after-second-recovery-code');

    // The app's next code: the activation's step must be over first. This is the journey's one
    // long real-time wait (up to a time step, less the time the recovery codes took above); the
    // only other is the at most 12 s freshCode may have waited before the activation.
    await passwordThenCodePage(person, ada, 'login-3');
    // Until the code is given, nobody is signed in; looking elsewhere does not end the login.
    expect(await person.homeStatus('login-3-home-not-yet')).toContain('You are not signed in.');
    await person.visit('/accounts/2fa/', 'mfa-index-asks-login');
    expect(person.pathname()).toBe('/accounts/login/');
    await person.visit('/accounts/2fa/authenticate/', 'login-3-code-page');
    expect(await person.heading()).toBe('Two-factor authentication');
    const nextStepAt = (activation.step + 1) * PERIOD_MS;
    if (Date.now() < nextStepAt + 1000) await sleep(nextStepAt + 1000 - Date.now());
    const login = await freshCode(secret, 3_000);
    expect(login.step).toBeGreaterThan(activation.step);
    await enterCode(person, login.code, 'signed-in-with-app-code');
    await expectSignedInAfterCode(person, ada);
    await person.visit('/accounts/2fa/', 'mfa-index-after-logins');
    expect(await person.page.locator('#mfa-totp-status').innerText()).toBe('Active');
    expect(await person.text()).toMatch(/Last used [A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M UTC\./);
    expect(await person.page.locator('#mfa-recovery-unused').innerText()).toBe(`${RECOVERY_CODE_COUNT - 2} of ${RECOVERY_CODE_COUNT}`);

    // New recovery codes, six minutes after the login: the person confirms it is them, here with
    // a recovery code on the two-factor reauthentication page.
    await ageLogin(site, databasePath, person, 6 * 60);
    await person.follow('Generate new codes', 'generate-asks-reauthentication', person.page.locator('main'));
    expect(person.pathname()).toBe('/accounts/reauthenticate/');
    expect(new URL(person.page.url()).searchParams.get('next')).toBe('/accounts/2fa/recovery-codes/generate/');
    await person.follow('Use your authenticator app or a recovery code instead', 'mfa-reauthenticate-form');
    expect(person.pathname()).toBe('/accounts/2fa/reauthenticate/');
    expect(await person.heading()).toBe('Confirm access');
    await person.fill({ code: codes[0]! });
    const usedAgain = await person.press('Confirm', 'mfa-reauthenticate-used-code');
    expect(usedAgain.status()).toBe(400);
    expect(await person.formErrors()).toEqual([INCORRECT_CODE]);
    await person.fill({ code: codes[2]! });
    await person.press('Confirm', 'generate-form');
    expect(person.pathname()).toBe('/accounts/2fa/recovery-codes/generate/');
    expect(await person.heading()).toBe('Generate recovery codes');
    expect(await person.text()).toContain('every one of your current codes, used or not, stops working');
    await person.press('Generate', 'new-recovery-codes');
    expect(person.pathname()).toBe('/accounts/2fa/recovery-codes/');
    await expectMessage(person, 'New recovery codes generated; the old ones no longer work.');
    const newCodes = await recoveryCodesShown(person);
    expect(newCodes).toHaveLength(RECOVERY_CODE_COUNT);
    for (const old of codes) expect(newCodes).not.toContain(old);
    expect(await person.page.locator('#mfa-recovery-unused').innerText()).toBe(`${RECOVERY_CODE_COUNT} of ${RECOVERY_CODE_COUNT} unused; each code works once.`);
    // The download (the page's link, fetched with this browser's cookies) holds the same codes.
    const downloadPath = await person.page.getByRole('link', { name: 'Download', exact: true }).getAttribute('href');
    expect(downloadPath).toBe('/accounts/2fa/recovery-codes/download/');
    const download = await person.page.request.get(downloadPath!);
    expect(download.status()).toBe(200);
    expect(download.headers()['content-disposition']).toBe('attachment; filename="recovery-codes.txt"');
    expect((await download.text()).trim().split('\n')).toEqual(newCodes);
    await waitForEmail(site.smtp, { to: ada.email, subject: SUBJECTS.regenerated });

    // Deactivation, six minutes later again: this time the person confirms with the password.
    await ageLogin(site, databasePath, person, 6 * 60);
    await person.visit('/accounts/2fa/', 'mfa-index-before-deactivation');
    await person.follow('Deactivate', 'deactivate-asks-reauthentication', person.page.locator('main'));
    expect(person.pathname()).toBe('/accounts/reauthenticate/');
    await person.fill({ password: ada.password });
    await person.press('Confirm', 'deactivate-form');
    expect(person.pathname()).toBe('/accounts/2fa/totp/deactivate/');
    expect(await person.heading()).toBe('Deactivate authenticator app');
    expect(await person.text()).toContain('Your recovery codes will be deleted as well');
    await person.press('Deactivate', 'deactivated');
    expect(person.pathname()).toBe('/accounts/2fa/');
    await expectMessage(person, 'Authenticator app deactivated.');
    expect(await person.page.locator('#mfa-totp-status').innerText()).toBe('Inactive');
    expect(await person.page.locator('#mfa-recovery-unused').count()).toBe(0);
    const deactivatedMail = await waitForEmail(site.smtp, { to: ada.email, subject: SUBJECTS.deactivated });
    expect(deactivatedMail.text).toContain('Signing in now needs only your password.');

    // The password alone signs in again.
    await signOut(person, 'signed-out-after-deactivation');
    await person.signIn(ada.username, ada.password, { shot: 'login-password-only' });
    // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
    expect(person.pathname()).toBe(`/users/${ada.username}/`);
    expect(await person.heading()).toBe(ada.username);
    await person.close();
  }, MFA_JOURNEY_TIMEOUT_MS);
});
