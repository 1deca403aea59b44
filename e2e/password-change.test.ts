/**
 * Changing a password (the old one is required). The browser that changes it
 * stays signed in with a new session id; every other session of the account ends; the owner is
 * told by email.
 */
import { describe, expect, it } from 'vitest';
import { browserTestsEnabled } from './harness.js';
import { JOURNEY_TIMEOUT_MS, NEW_PASSWORD, Person, expectMessage, newAccount, useSiteAndBrowser, waitForEmail } from './journey.js';

describe.runIf(browserTestsEnabled())('password change', () => {
  const journey = useSiteAndBrowser({ env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional' } });

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
