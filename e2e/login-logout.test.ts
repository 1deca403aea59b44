/**
 * Signing in (by username on the example site) with and without
 * "remember me", the generic error for wrong credentials, `next` followed only within the site,
 * and signing out through the confirmation form.
 */
import { describe, expect, it } from 'vitest';
import { browserTestsEnabled } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, newAccount, useSiteAndBrowser, type Account } from './journey.js';

const GENERIC_ERROR = 'The username and/or password you specified are not correct.';
/** A small phone's screen, and the window the journeys use otherwise (Playwright's default). */
const PHONE = { width: 360, height: 740 };
const DESKTOP = { width: 1280, height: 720 };

/** Where each link of the page's header is drawn, and the height of one line of its text. */
interface LinkBox {
  name: string;
  left: number;
  right: number;
  height: number;
  lineHeight: number;
}
const HEADER_LINK_BOXES = `[...document.querySelectorAll('header a')].map((link) => {
  const box = link.getBoundingClientRect();
  return { name: link.textContent.trim(), left: box.left, right: box.right, height: box.height, lineHeight: parseFloat(getComputedStyle(link).lineHeight) };
})`;

describe.runIf(browserTestsEnabled())('login and logout', () => {
  const journey = useSiteAndBrowser({ env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional' } });

  /** An account made through the signup page in a browser of its own, which is then closed. */
  async function existingAccount(prefix: string): Promise<Account> {
    const account = newAccount(prefix);
    const signup = await Person.open(journey.browser, journey.site, 'setup');
    await signup.signUp(account);
    expect(signup.pathname()).toBe(`/users/${account.username}/`);
    await signup.close();
    return account;
  }

  it('signs in with "remember me" (a lasting cookie), and signs out only through the confirmation form', async () => {
    const ada = await existingAccount('ada');
    const person = await Person.open(journey.browser, journey.site);
    await person.visit('/accounts/login/', 'login-form');
    expect(await person.heading()).toBe('Sign in');
    await person.page.getByLabel('Username').fill(ada.username);
    await person.page.getByLabel('Password').fill(ada.password);
    await person.page.getByLabel('Remember me').check();
    await person.press('Sign in', 'signed-in');
    // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
    expect(person.pathname()).toBe(`/users/${ada.username}/`);
    expect(await person.heading()).toBe(ada.username);
    const cookie = await person.sessionCookie();
    // A persistent cookie, lasting about SESSION_COOKIE_AGE (14 days); not a browser-session one.
    expect(cookie?.expires).toBeGreaterThan(Date.now() / 1000 + 13 * 86400);
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');

    // On a phone the header's five links wrap under the site's name as whole links, each on one
    // line and inside the screen, and the page does not scroll sideways.
    await person.page.setViewportSize(PHONE);
    await person.visit('/accounts/email/', 'email-page-phone');
    // Measured in the page (a string: this project's TypeScript has no DOM types).
    const links = await person.page.evaluate<LinkBox[]>(HEADER_LINK_BOXES);
    expect(links.map((link) => link.name)).toEqual(['My Awesome Project', 'Email', 'Password', 'Two-factor authentication', 'Sessions', 'Sign out']);
    for (const link of links) {
      expect(link.left, `${link.name} starts inside the screen`).toBeGreaterThanOrEqual(0);
      expect(link.right, `${link.name} ends inside the screen`).toBeLessThanOrEqual(PHONE.width);
      expect(link.height, `${link.name} is one line`).toBeLessThan(link.lineHeight * 1.5);
    }
    expect(await person.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await person.page.setViewportSize(DESKTOP);

    // The header's "Sign out" link only asks.
    await person.visit('/accounts/email/', 'email-page');
    const asked = await person.follow('Sign out', 'logout-confirmation', person.nav());
    expect(asked.status()).toBe(200);
    expect(person.pathname()).toBe('/accounts/logout/');
    expect(await person.text()).toContain('Are you sure you want to sign out?');
    expect(await person.homeStatus('home-still-signed-in')).toContain(`Signed in as ${ada.username}.`);

    await person.visit('/accounts/logout/', 'logout-confirmation-again');
    await person.press('Sign out', 'signed-out', person.page.locator('main'));
    expect(person.pathname()).toBe('/');
    expect(await person.text()).toContain('You are not signed in.');
    expect((await person.sessionCookie())?.value ?? '').not.toBe(cookie?.value);
    // The old session is over: the email page asks for a login.
    await person.visit('/accounts/email/', 'email-page-after-logout');
    expect(person.pathname()).toBe('/accounts/login/');
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('a wrong password and an unknown username get the same generic error', async () => {
    const cleo = await existingAccount('cleo');
    const person = await Person.open(journey.browser, journey.site);

    const wrong = await person.signIn(cleo.username, `${cleo.password}-wrong`, { shot: 'wrong-password' });
    expect(wrong.status()).toBe(400);
    expect(person.pathname()).toBe('/accounts/login/');
    expect(await person.formErrors()).toEqual([GENERIC_ERROR]);
    // What was typed as the login stays; the password does not.
    expect(await person.page.getByLabel('Username').inputValue()).toBe(cleo.username);
    expect(await person.page.getByLabel('Password').inputValue()).toBe('');

    const unknown = await person.signIn(`${cleo.username}-nobody`, cleo.password, { shot: 'unknown-user' });
    expect(unknown.status()).toBe(400);
    expect(await person.formErrors()).toEqual([GENERIC_ERROR]);
    expect(await person.homeStatus('home-not-signed-in')).toContain('You are not signed in.');

    // And the right password still works after the failures.
    await person.signIn(cleo.username, cleo.password, { shot: 'right-password' });
    expect(person.pathname()).toBe(`/users/${cleo.username}/`);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('follows `next` to a page of the site, and ignores one that leads elsewhere', async () => {
    const dora = await existingAccount('dora');
    const person = await Person.open(journey.browser, journey.site);

    // A signed-out visit to a private page goes to the login page, which returns there.
    await person.visit('/accounts/sessions/', 'sessions-asks-login');
    expect(person.pathname()).toBe('/accounts/login/');
    expect(new URL(person.page.url()).searchParams.get('next')).toBe('/accounts/sessions/');
    await person.fill({ login: dora.username, password: dora.password });
    await person.press('Sign in', 'back-at-sessions');
    expect(person.pathname()).toBe('/accounts/sessions/');
    expect(await person.heading()).toBe('Sessions');
    await person.close();

    // A `next` that leads off the site is ignored: the login lands where any other does.
    for (const [shot, next] of [
      ['absolute-url', 'https://evil.example/'],
      ['protocol-relative', '//evil.example/'],
    ] as const) {
      const elsewhere = await Person.open(journey.browser, journey.site, shot);
      await elsewhere.signIn(dora.username, dora.password, { path: `/accounts/login/?next=${encodeURIComponent(next)}`, shot: 'next' });
      expect(elsewhere.page.url()).toBe(`${journey.site.url}/users/${dora.username}/`);
      expect(await elsewhere.heading()).toBe(dora.username);
      await elsewhere.close();
    }
  }, JOURNEY_TIMEOUT_MS);

  it('without "remember me" the cookie ends with the browser session; "signed in" and "signed out" show on the page landed on, once', async () => {
    const eve = await existingAccount('eve');
    const person = await Person.open(journey.browser, journey.site);
    await person.signIn(eve.username, eve.password, { remember: false });
    expect((await person.sessionCookie())?.expires).toBe(-1);
    // The message is read on the page the login lands on, and only there.
    expect(await person.messages()).toEqual([`Successfully signed in as ${eve.username}.`]);
    await person.visit('/accounts/email/', 'email-page');
    expect(await person.messages()).toEqual([]);

    await person.follow('Sign out', 'logout-confirmation', person.nav());
    await person.press('Sign out', 'signed-out', person.page.locator('main'));
    expect(await person.messages()).toEqual(['You have signed out.']);
    await person.follow('Sign in', 'login-page', person.nav());
    expect(await person.messages()).toEqual([]);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
