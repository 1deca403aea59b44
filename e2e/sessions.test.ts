/**
 * The sessions page, and a password change: the page lists the browsers signed in to the
 * account, and "Sign out all other sessions" ends every one but this. Changing a password (the old
 * one is required) keeps the browser that changes it signed in with a new session id, ends every
 * other session of the account, and tells the owner by email. Both journeys share one site.
 */
import { describe, expect, it } from 'vitest';
import { browserTestsEnabled } from './harness.js';
import { JOURNEY_TIMEOUT_MS, NEW_PASSWORD, Person, expectMessage, newAccount, useSiteAndBrowser, waitForEmail } from './journey.js';

const PHONE_USER_AGENT = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const DESKTOP_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe.runIf(browserTestsEnabled())('sessions page and password change', () => {
  const journey = useSiteAndBrowser({ env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional' } });

  it("lists the account's signed-in browsers and signs out all the others", async () => {
    const ada = newAccount('ada');
    const laptop = await Person.open(journey.browser, journey.site, 'laptop', { userAgent: DESKTOP_USER_AGENT });
    await laptop.signUp(ada);
    expect(laptop.pathname()).toBe(`/users/${ada.username}/`);

    // Alone at first.
    await laptop.visit('/accounts/email/', 'email-page');
    await laptop.follow('Sessions', 'sessions-alone', laptop.nav());
    expect(laptop.pathname()).toBe('/accounts/sessions/');
    expect(await laptop.heading()).toBe('Sessions');
    expect(await laptop.page.locator('tbody tr').count()).toBe(1);
    expect(await laptop.text()).toContain('No other session is signed in.');
    expect(await laptop.page.getByRole('button', { name: 'Sign out all other sessions' }).count()).toBe(0);

    // Then on a phone as well.
    const phone = await Person.open(journey.browser, journey.site, 'phone', { userAgent: PHONE_USER_AGENT });
    await phone.signIn(ada.username, ada.password);
    expect(phone.pathname()).toBe(`/users/${ada.username}/`);
    const secondLaptop = await Person.open(journey.browser, journey.site, 'second-laptop', { userAgent: DESKTOP_USER_AGENT });
    await secondLaptop.signIn(ada.username, ada.password);
    // Someone else is signed in too: their session is not Ada's to see or end.
    const bob = newAccount('bob');
    const bobs = await Person.open(journey.browser, journey.site, 'bob', { userAgent: DESKTOP_USER_AGENT });
    await bobs.signUp(bob);

    await laptop.visit('/accounts/sessions/', 'sessions-three');
    const rows = laptop.page.locator('tbody tr');
    expect(await rows.count()).toBe(3);
    const current = laptop.page.locator('tbody tr[aria-current="true"]');
    expect(await current.count()).toBe(1);
    expect(await current.innerText()).toContain('Chrome 126 on Linux (this session)');
    expect(await rows.filter({ hasText: 'Chrome 126 on Android' }).count()).toBe(1);
    for (const row of await rows.all()) {
      const cells = await row.locator('td').allInnerTexts();
      expect(cells[1]).toBe('127.0.0.1');
      // Written as the reader's language writes a time (English here), in UTC.
      expect(cells[2]).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M UTC$/);
      expect(cells[3]).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d\d:\d\d [AP]M UTC$/);
    }

    await laptop.press('Sign out all other sessions', 'others-signed-out');
    expect(laptop.pathname()).toBe('/accounts/sessions/');
    await expectMessage(laptop, 'Signed out of 2 other sessions.');
    expect(await laptop.page.locator('tbody tr').count()).toBe(1);
    expect(await laptop.text()).toContain('No other session is signed in.');
    expect(await laptop.homeStatus('home-still-signed-in')).toContain(`Signed in as ${ada.username}.`);

    expect(await phone.homeStatus('home-signed-out')).toContain('You are not signed in.');
    await phone.visit('/accounts/sessions/', 'sessions-asks-login');
    expect(phone.pathname()).toBe('/accounts/login/');
    expect(await secondLaptop.homeStatus('home-signed-out')).toContain('You are not signed in.');

    expect(await bobs.homeStatus('still-signed-in')).toContain(`Signed in as ${bob.username}.`);

    await Promise.all([laptop.close(), phone.close(), secondLaptop.close(), bobs.close()]);
  }, JOURNEY_TIMEOUT_MS);

  it('asks for the current password, changes it, keeps this browser signed in and signs the other one out', async () => {
    const ada = newAccount('ada');
    const laptop = await Person.open(journey.browser, journey.site, 'laptop');
    await laptop.signUp(ada);
    expect(laptop.pathname()).toBe(`/users/${ada.username}/`);
    const phone = await Person.open(journey.browser, journey.site, 'phone');
    await phone.signIn(ada.username, ada.password);
    expect(phone.pathname()).toBe(`/users/${ada.username}/`);

    await laptop.visit('/accounts/email/', 'email-page');
    await laptop.follow('Password', 'change-form', laptop.nav());
    expect(laptop.pathname()).toBe('/accounts/password/change/');
    expect(await laptop.heading()).toBe('Change password');

    // Refusals change nothing: a new password the validators reject, two that differ, a wrong current one.
    await laptop.fill({ oldpassword: ada.password, password1: '12345678901', password2: '12345678901' });
    const numeric = await laptop.press('Change password', 'numeric-refused');
    expect(numeric.status()).toBe(400);
    expect((await laptop.formErrors()).join(' ')).toMatch(/entirely numeric/i);
    await laptop.fill({ oldpassword: ada.password, password1: NEW_PASSWORD, password2: `${NEW_PASSWORD}x` });
    const differ = await laptop.press('Change password', 'passwords-differ');
    expect(differ.status()).toBe(400);
    expect(await laptop.formErrors()).toEqual(['You must type the same password each time.']);
    await laptop.fill({ oldpassword: `${ada.password}-wrong`, password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    const wrong = await laptop.press('Change password', 'wrong-current-password');
    expect(wrong.status()).toBe(400);
    expect(await laptop.formErrors()).toEqual(['Please type your current password.']);
    expect(await laptop.page.locator('#id_oldpassword').getAttribute('aria-invalid')).toBe('true');
    expect(await phone.homeStatus('home-still-signed-in')).toContain(`Signed in as ${ada.username}.`);

    const before = await laptop.sessionCookie();
    await laptop.fill({ oldpassword: ada.password, password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    await laptop.press('Change password', 'password-changed');
    expect(laptop.pathname()).toBe('/accounts/password/change/');
    await expectMessage(laptop, 'Password successfully changed.');
    const after = await laptop.sessionCookie();
    expect(after?.value).toBeTruthy();
    expect(after?.value).not.toBe(before?.value);
    expect(await laptop.homeStatus('home-signed-in')).toContain(`Signed in as ${ada.username}.`);

    const notice = await waitForEmail(journey.site.smtp, { to: ada.email, subject: 'Your password has been changed' });
    expect(notice.text.length).toBeGreaterThan(0);

    // The other browser's session has ended: its next private page asks for a login.
    expect(await phone.homeStatus('home-signed-out')).toContain('You are not signed in.');
    await phone.visit('/accounts/email/', 'email-page-asks-login');
    expect(phone.pathname()).toBe('/accounts/login/');
    await phone.fill({ login: ada.username, password: ada.password });
    await phone.press('Sign in', 'old-password-refused');
    expect(await phone.formErrors()).toEqual(['The username and/or password you specified are not correct.']);
    await phone.fill({ login: ada.username, password: NEW_PASSWORD });
    await phone.press('Sign in', 'new-password-back-at-email-page');
    expect(phone.pathname()).toBe('/accounts/email/');

    await laptop.close();
    await phone.close();
  }, JOURNEY_TIMEOUT_MS);
});
