/**
 * The sessions page (and the session side of a password change): it lists the browsers
 * signed in to the account, and "Sign out all other sessions" ends every one but this.
 */
import { describe, expect, it } from 'vitest';
import { browserTestsEnabled } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, expectMessage, newAccount, useSiteAndBrowser } from './journey.js';

const PHONE_USER_AGENT = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36';
const DESKTOP_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe.runIf(browserTestsEnabled())('sessions page', () => {
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
      expect(cells[2]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
      expect(cells[3]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
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
});
