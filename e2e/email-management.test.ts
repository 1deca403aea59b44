/**
 * Managing email addresses. Add one (a confirmation mail is sent),
 * confirm it from the mail, make it primary, remove the old one; a change asked for more than 5
 * minutes after the last login goes through the reauthentication page first, which returns to the
 * email page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsEnabled, formWithButton, linkFromEmail, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, ageLogin, emailsTo, expectMessage, newAccount, startSiteAndBrowser, waitForEmail } from './journey.js';

const CONFIRM_SUBJECT = 'Please confirm your email address';

describe.runIf(browserTestsEnabled())('email management', () => {
  let site: RunningSite;
  let browser: Browser;
  // The site's database is the test's own file, so that a test can age a login (see below).
  let directory: string | undefined;
  let databasePath: string;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'lk-e2e-email-'));
    databasePath = join(directory, 'db.sqlite3');
    ({ site, browser } = await startSiteAndBrowser({
      env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional', DATABASE_URL: `sqlite:${databasePath}` },
    }));
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop()]);
    if (directory) rmSync(directory, { recursive: true, force: true });
  }, SETUP_TIMEOUT_MS);

  /** The status column of the email page's row for this address: "Verified, primary", "Unverified"... */
  async function statusOf(person: Person, email: string): Promise<string> {
    const row = person.page.locator('tbody tr', { hasText: email });
    return ((await row.locator('td').nth(1).innerText()) ?? '').trim();
  }

  async function choose(person: Person, email: string): Promise<void> {
    await person.fill({ email }, formWithButton(person.page, 'Make primary'));
  }

  it('adds an address, confirms it from the mail, makes it primary and removes the old one, reauthenticating when asked', async () => {
    const ada = newAccount('ada');
    const work = `${ada.username}.work@example.com`;
    const person = await Person.open(browser, site);
    await person.signUp(ada);
    expect(person.pathname()).toBe(`/users/${ada.username}/`);

    // The address given at signup is verified from its mail first. (Were it not, confirming the
    // added one would make that one primary at once, as an account's primary address should be a verified one.)
    const signupMail = await waitForEmail(site.smtp, { to: ada.email, subject: CONFIRM_SUBJECT });
    await person.visit(linkFromEmail(signupMail, '/accounts/confirm-email/'), 'confirm-signup-address');
    await person.press('Confirm', 'signup-address-confirmed');
    await person.visit('/accounts/sessions/', 'sessions-page');
    await person.follow('Email', 'email-page', person.nav());
    expect(await person.heading()).toBe('Email addresses');
    expect(await statusOf(person, ada.email)).toBe('Verified, primary');

    // Add: just after the login, so no reauthentication is asked.
    await person.fill({ email: work }, formWithButton(person.page, 'Add email'));
    await person.press('Add email', 'address-added');
    expect(person.pathname()).toBe('/accounts/email/');
    await expectMessage(person, `Confirmation email sent to ${work}.`);
    expect(await statusOf(person, work)).toBe('Unverified');

    // An unverified address cannot become primary.
    await choose(person, work);
    const refused = await person.press('Make primary', 'unverified-not-primary');
    expect(refused.status()).toBe(400);
    expect(await person.formErrors()).toEqual(['Your primary email address must be verified.']);

    // Adding it again says it is already there.
    await person.fill({ email: work }, formWithButton(person.page, 'Add email'));
    await person.press('Add email', 'address-added-twice');
    expect(await person.formErrors()).toEqual(['This email address is already associated with this account.']);

    // Asking for the mail again right away is held back (one per address per 3 minutes).
    await choose(person, work);
    const resend = await person.press('Re-send verification', 'resend-too-soon');
    expect(resend.status()).toBe(429);
    expect(await person.formErrors()).toEqual([
      'A confirmation email was sent to this address a moment ago. Please wait a few minutes before asking again.',
    ]);

    const mail = await waitForEmail(site.smtp, { to: work, subject: CONFIRM_SUBJECT });
    expect(emailsTo(site.smtp, { to: work, subject: CONFIRM_SUBJECT })).toHaveLength(1);
    await person.visit(linkFromEmail(mail, '/accounts/confirm-email/'), 'confirm-page');
    expect(await person.text()).toContain(`Please confirm that ${work} is an email address for the account ${ada.username}.`);
    await person.press('Confirm', 'confirmed');
    expect(person.pathname()).toBe('/accounts/email/');
    await expectMessage(person, `You have confirmed ${work}.`);
    expect(await statusOf(person, work)).toBe('Verified');

    // Six minutes later, making it primary asks for the password first.
    await ageLogin(site, databasePath, person, 6 * 60);
    await choose(person, work);
    await person.press('Make primary', 'reauthenticate-page');
    expect(person.pathname()).toBe('/accounts/reauthenticate/');
    expect(new URL(person.page.url()).searchParams.get('next')).toBe('/accounts/email/');
    expect(await person.heading()).toBe('Confirm access');
    expect(await person.text()).toContain('please enter your password to confirm it is you');

    await person.fill({ password: `${ada.password}-wrong` });
    const wrong = await person.press('Confirm', 'reauthenticate-wrong-password');
    expect(wrong.status()).toBe(400);
    expect(await person.formErrors()).toEqual(['Incorrect password.']);
    await person.fill({ password: ada.password });
    await person.press('Confirm', 'back-at-email-page');
    expect(person.pathname()).toBe('/accounts/email/');
    // Back where they were. The refused request is not replayed (by design: see
    // requireRecentAuthentication in pages/page.ts), so nothing has changed yet and they press again.
    expect(await statusOf(person, ada.email)).toBe('Verified, primary');

    await choose(person, work);
    await person.press('Make primary', 'made-primary');
    await expectMessage(person, 'Primary email address set.');
    expect(await statusOf(person, work)).toBe('Verified, primary');
    expect(await statusOf(person, ada.email)).toBe('Verified');
    // The notice goes to the address that was primary, so a takeover cannot hide from its owner.
    const changed = await waitForEmail(site.smtp, { to: ada.email, subject: 'Your primary email address was changed' });
    expect(changed.text).toContain(work);

    // The primary address cannot be removed; the old one can.
    await choose(person, work);
    await person.press('Remove', 'primary-not-removed');
    expect(await person.formErrors()).toEqual(['You cannot remove your primary email address.']);
    await choose(person, ada.email);
    await person.press('Remove', 'old-address-removed');
    await expectMessage(person, `Removed email address ${ada.email}.`);
    expect(await person.page.locator('tbody tr').count()).toBe(1);
    expect(await statusOf(person, work)).toBe('Verified, primary');
    const removed = await waitForEmail(site.smtp, { to: work, subject: 'An email address was removed from your account' });
    expect(removed.text).toContain(ada.email);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
