/**
 * A forgotten password. The request gets the same page whether or not the
 * address has an account; the mailed link leads (through a redirect that takes the key out of the
 * URL) to the form; the new password signs in, the old one no longer does, the link works once,
 * and the owner is told by email.
 */
import { describe, expect, it } from 'vitest';
import { browserTestsEnabled, linkFromEmail } from './harness.js';
import { JOURNEY_TIMEOUT_MS, NEW_PASSWORD, Person, emailsTo, newAccount, useSiteAndBrowser, waitForEmail } from './journey.js';

const RESET_SUBJECT = 'Password reset';
const RESET_DONE_SUBJECT = 'Your password has been reset';

describe.runIf(browserTestsEnabled())('password reset', () => {
  const journey = useSiteAndBrowser({ env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional' } });

  it('resets a forgotten password from the mailed link, ends the sessions signed in before, signs in with the new one, and tells the owner', async () => {
    const ada = newAccount('ada');
    // Signed up, and still signed in, on a laptop; the reset happens on another browser.
    const laptop = await Person.open(journey.browser, journey.site, 'laptop');
    await laptop.signUp(ada);
    expect(laptop.pathname()).toBe(`/users/${ada.username}/`);

    const person = await Person.open(journey.browser, journey.site);
    // Someone asks for an address without an account first: the page they get tells them nothing.
    const nobody = `${ada.username}-nobody@example.com`;
    await person.visit('/accounts/login/', 'login-page');
    await person.follow('Forgot your password?', 'reset-form');
    expect(await person.heading()).toBe('Password reset');
    await person.fill({ email: nobody });
    await person.press('Reset my password', 'reset-requested-unknown');
    expect(person.pathname()).toBe('/accounts/password/reset/done/');
    const unknownPage = await person.text();
    expect(unknownPage).toContain('If an account uses that email address, we have sent it a link to reset the password.');

    await person.visit('/accounts/password/reset/', 'reset-form-again');
    await person.fill({ email: ada.email });
    await person.press('Reset my password', 'reset-requested');
    expect(person.pathname()).toBe('/accounts/password/reset/done/');
    expect(await person.text()).toBe(unknownPage);

    const mail = await waitForEmail(journey.site.smtp, { to: ada.email, subject: RESET_SUBJECT });
    expect(mail.text).toContain(`Your username is ${ada.username}.`);
    const link = linkFromEmail(mail, '/accounts/password/reset/key/');
    expect(new URL(link).origin).toBe(journey.site.url);
    expect(emailsTo(journey.site.smtp, { to: nobody, subject: /./ })).toHaveLength(0);

    // The link leads to the form at a URL without the key.
    const form = await person.visit(link, 'reset-from-key-form');
    expect(form.status()).toBe(200);
    expect(person.page.url()).not.toBe(link);
    expect(person.pathname()).toMatch(/^\/accounts\/password\/reset\/key\/[^/]+-set-password\/$/);
    expect(await person.heading()).toBe('Change password');
    expect(form.headers()['referrer-policy']).toBe('same-origin');

    // The validators apply: a password too short is refused on the form.
    await person.fill({ password1: 'short', password2: 'short' });
    const tooShort = await person.press('Change password', 'new-password-too-short');
    expect(tooShort.status()).toBe(400);
    expect((await person.formErrors()).join(' ')).toMatch(/too short/i);

    await person.fill({ password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    await person.press('Change password', 'password-changed');
    expect(person.pathname()).toBe('/accounts/password/reset/key/done/');
    expect(await person.text()).toContain('Your password is now changed');

    const notice = await waitForEmail(journey.site.smtp, { to: ada.email, subject: RESET_DONE_SUBJECT });
    expect(notice.text.length).toBeGreaterThan(0);

    // The laptop's session ended with the reset.
    expect(await laptop.homeStatus('home-signed-out')).toContain('You are not signed in.');
    await laptop.close();

    // The link is spent.
    await person.visit(link, 'reset-link-used');
    expect(await person.heading()).toBe('Bad token');
    expect(await person.text()).toContain('The password reset link was invalid, possibly because it has already been used or has expired.');

    await person.follow('Sign in', 'login-form', person.nav());
    await person.fill({ login: ada.username, password: ada.password });
    await person.press('Sign in', 'old-password-refused');
    expect(await person.formErrors()).toEqual(['The username and/or password you specified are not correct.']);

    await person.signIn(ada.username, NEW_PASSWORD, { shot: 'new-password' });
    // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
    expect(person.pathname()).toBe(`/users/${ada.username}/`);
    expect(await person.heading()).toBe(ada.username);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
