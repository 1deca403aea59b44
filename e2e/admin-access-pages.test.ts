/**
 * The admin's pages for what lets a person in, in Chromium against the example site, reached from
 * the index's links and the user's own page as a staff member reaches them: a superuser adds an
 * API token for a person (its key shown once, and working), then deletes it after the
 * confirmation; removes a person's authenticator app after its confirmation; ends one of their
 * sessions, then all of them; and once they have signed in with their password alone, "signs them
 * out everywhere" from their page. Each page is screenshotted in the e2e artifacts, and each step is
 * checked where a person would check it: the message, the list, the person's browser, their mail,
 * the API's answer to the key.
 *
 * As admin-pages.test.ts, these journeys run once, on PostgreSQL when there is one.
 */
import { describe, expect, it } from 'vitest';
import { freshCode } from './authenticator-app.js';
import { logInToAdmin, openFromIndex, rows, rowTexts, search, signedUp, useSuperuser } from './admin-journey.js';
import { browserTestsEnabled, deployedDatabase, linkFromEmail } from './harness.js';
import { JOURNEY_TIMEOUT_MS, PASSWORD, Person, expectMessage, newAccount, useSiteAndBrowser, waitForEmail } from './journey.js';

const PHONE_USER_AGENT = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';

describe.runIf(browserTestsEnabled())(`the admin's tokens, authenticators and sessions, on ${deployedDatabase()}`, () => {
  const journey = useSiteAndBrowser({ database: deployedDatabase() });
  const keeper = useSuperuser(journey);

  /** What the API answers a program that sends this key: the username it is signed in as, or the status. */
  async function apiAnswer(key: string): Promise<string | number> {
    const response = await fetch(`${journey.site.url}/api/users/me/`, { headers: { authorization: `Token ${key}` } });
    if (response.status !== 200) return response.status;
    return ((await response.json()) as { username: string }).username;
  }

  it('adds an API token for a person, shows its key once, and deletes it after the confirmation', async () => {
    const ada = newAccount('ada');
    const person = await signedUp(journey, ada, 'ada');
    await person.close();
    const admin = await Person.open(journey.browser, journey.site, 'staff');
    await logInToAdmin(admin, keeper, PASSWORD);

    await openFromIndex(admin, 'Tokens', 'tokens');
    await admin.follow('Add token', 'token-add-form', admin.page.locator('main'));
    expect(await admin.heading()).toBe('Add token');
    await admin.fill({ user: ada.username });
    await admin.press('Save', 'token-added');
    expect(await admin.heading()).toBe('Token added');
    expect(await admin.text()).toContain('Its key is shown here once');
    const key = await admin.page.getByLabel('Key').inputValue();
    expect(key).toMatch(/^[0-9a-f]{40}$/);
    expect(await apiAnswer(key)).toBe(ada.username);

    await admin.follow('Back to the tokens', 'tokens-with-new-one', admin.page.locator('main'));
    await search(admin, { q: ada.username }, 'token-found');
    expect(await rowTexts(admin)).toEqual([expect.stringContaining(ada.username)]);
    await admin.follow(ada.username, 'token', admin.page.locator('main table'));
    expect(await admin.heading()).toBe('Token');
    expect(await admin.text()).toContain('hidden: it was shown once');
    expect(await admin.page.content()).not.toContain(key);
    await admin.follow('Delete', 'token-delete-confirmation', admin.page.locator('main'));
    expect(await admin.text()).toContain(`Are you sure you want to delete the token of “${ada.username}”?`);
    await admin.press('Yes, I’m sure', 'token-deleted');
    await expectMessage(admin, `The token of “${ada.username}” was deleted.`);
    expect(await apiAnswer(key)).toBe(401);
    await admin.close();
  }, JOURNEY_TIMEOUT_MS);

  it("removes a person's authenticator app, ends one of their sessions and then all, and signs them out everywhere from their page", async () => {
    const bea = newAccount('bea');
    const laptop = await signedUp(journey, bea, 'laptop');
    const phone = await Person.open(journey.browser, journey.site, 'phone', { userAgent: PHONE_USER_AGENT });
    await phone.signIn(bea.username, bea.password);
    expect(phone.pathname()).toBe(`/users/${bea.username}/`);
    // An authenticator app needs a verified address: she follows the mailed link, then turns the
    // app on (right after signing up, so no reauthentication is asked).
    await laptop.visit(linkFromEmail(await waitForEmail(journey.site.smtp, { to: bea.email, subject: 'Please confirm your email address' }), '/accounts/confirm-email/'), 'confirm-page');
    await laptop.press('Confirm', 'confirmed');
    await laptop.visit('/accounts/2fa/totp/activate/', 'activate-form');
    await laptop.page.locator('details summary').click();
    const secret = (await laptop.page.locator('#mfa-totp-secret').innerText()).trim();
    await laptop.fill({ code: (await freshCode(secret, 3_000)).code });
    await laptop.press('Activate', 'activated');
    expect(laptop.pathname()).toBe('/accounts/2fa/recovery-codes/');

    const admin = await Person.open(journey.browser, journey.site, 'staff');
    await logInToAdmin(admin, keeper, PASSWORD);
    const openHerPage = async (shot: string) => {
      await openFromIndex(admin, 'Users', `${shot}-users`);
      await search(admin, { q: bea.username }, `${shot}-found`);
      await admin.follow(bea.username, shot, admin.page.locator('main table'));
      expect(await admin.heading()).toBe('Change user');
    };

    // Her phone with the app is lost: the app goes, the recovery codes with it.
    await openHerPage('user');
    expect(await admin.text()).toMatch(/Authenticators (totp, recovery_codes|recovery_codes, totp) \(manage\)/);
    await admin.follow('manage', 'authenticators', admin.page.locator('main'));
    expect(await admin.heading()).toBe(`Authenticators of ${bea.username}`);
    expect(await rowTexts(admin)).toHaveLength(2);
    await admin.follow(`Remove the authenticator app of ${bea.username}`, 'authenticator-remove-confirmation', admin.page.locator('main table'));
    expect(await admin.heading()).toBe('Are you sure?');
    expect(await admin.text()).toContain('Their recovery codes go with it, and signing in will need only their password.');
    await admin.press('Yes, I’m sure', 'authenticator-removed');
    await expectMessage(admin, `Authenticator app and recovery codes of “${bea.username}” removed; they were told by email.`);
    await waitForEmail(journey.site.smtp, { to: bea.email, subject: 'Two-factor authentication was turned off for your account' });

    // Her sessions: the phone's first, then the rest.
    await openHerPage('user-without-authenticators');
    expect(await admin.text()).toContain('Authenticators none');
    await admin.follow('Signed-in sessions', 'sessions', admin.page.locator('main'));
    expect(await admin.heading()).toBe(`Sessions of ${bea.username}`);
    expect(await rows(admin).count()).toBe(2);
    await admin.press(/^End session /, 'phone-session-ended', rows(admin).filter({ hasText: 'Android' }));
    await expectMessage(admin, `A session of “${bea.username}” was ended.`);
    expect(await rowTexts(admin)).toEqual([expect.not.stringContaining('Android')]);
    expect(await phone.homeStatus('signed-out')).toContain('You are not signed in.');
    expect(await laptop.homeStatus('still-signed-in')).toContain(`Signed in as ${bea.username}.`);
    await admin.press(`End all of ${bea.username}’s sessions`, 'all-sessions-ended');
    await expectMessage(admin, `1 session of “${bea.username}” ended.`);
    expect(await rowTexts(admin)).toEqual(['No signed-in session.']);
    expect(await laptop.homeStatus('signed-out')).toContain('You are not signed in.');

    // Her password alone signs her in now; "Sign out everywhere" on her page ends that session too.
    await laptop.signIn(bea.username, bea.password, { shot: 'password-alone' });
    expect(laptop.pathname()).toBe(`/users/${bea.username}/`);
    await openHerPage('user-signed-in-again');
    await admin.press('Sign out everywhere', 'signed-out-everywhere');
    await expectMessage(admin, '1 session ended.');
    expect(await laptop.homeStatus('signed-out-again')).toContain('You are not signed in.');
    await Promise.all([admin.close(), laptop.close(), phone.close()]);
  }, JOURNEY_TIMEOUT_MS);
});
