/**
 * The signup switches: signup closed by ACCOUNT_ALLOW_REGISTRATION=false, and the example
 * adapter's email domain allowlist (ACCOUNT_EMAIL_DOMAIN_ALLOWLIST).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsEnabled, formWithButton, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, emailsTo, newAccount, startSitesAndBrowser } from './journey.js';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

const CLOSED_TEXT = 'We are sorry, but the sign up is currently closed.';

describe.runIf(browserTestsEnabled())('signup switches', () => {
  // Two sites, started together: signup closed, and signup limited to a domain.
  let closedSite: RunningSite;
  let allowlistSite: RunningSite;
  let browser: Browser;
  /** An account made with the CLI (the pages cannot: signup is closed) while the first journey runs. */
  const owner = newAccount('owner');
  let ownerCreated: Promise<unknown>;

  beforeAll(async () => {
    let sites: RunningSite[];
    ({ sites, browser } = await startSitesAndBrowser([
      { env: { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false', LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional' } },
      { env: { LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: 'example.com', LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional' } },
    ]));
    [closedSite, allowlistSite] = sites as [RunningSite, RunningSite];
    ownerCreated = closedSite.manage(['createsuperuser', '--username', owner.username, '--email', owner.email, '--noinput'], {
      LATCHKEY_SUPERUSER_PASSWORD: owner.password,
    });
    ownerCreated.catch(() => undefined);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), closedSite?.stop(), allowlistSite?.stop()]);
  }, SETUP_TIMEOUT_MS);

  it('signup closed: no sign-up link, the page says signup is closed, and creates nothing when a form is posted anyway', async () => {
    const person = await Person.open(browser, closedSite);
    await person.visit('/accounts/login/', 'login-page');
    expect(await person.heading()).toBe('Sign in');
    expect(await person.page.getByRole('link', { name: 'Sign up' }).count()).toBe(0);
    expect(await person.text()).not.toContain('No account yet?');

    const closed = await person.visit('/accounts/signup/', 'signup-closed');
    expect(closed.status()).toBe(200);
    expect(await person.heading()).toBe('Sign up closed');
    expect(await person.text()).toContain(CLOSED_TEXT);
    expect(await person.page.locator('input[name=password1]').count()).toBe(0);
    expect(await person.page.getByRole('link', { name: 'Sign up' }).count()).toBe(0);
    // The way out the page offers.
    await person.follow('Sign in', 'login-from-closed-page', person.page.locator('main'));
    expect(person.pathname()).toBe('/accounts/login/');

    // A signup form kept from before the switch (rebuilt here in the page) is refused, and makes no account.
    const ada = newAccount('ada');
    await person.visit('/accounts/signup/', 'signup-closed-again');
    const csrf = (await person.page.context().cookies()).find((cookie) => cookie.name === 'csrftoken')?.value ?? '';
    const fields = { csrfmiddlewaretoken: csrf, email: ada.email, username: ada.username, password1: ada.password, password2: ada.password };
    const inputs = Object.entries(fields).map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`);
    // Written into the closed page itself, so it posts from the site's origin as the old page would have.
    await person.page.setContent(`<main><form method="post" action="/accounts/signup/">${inputs.join('')}<button>Old sign up</button></form></main>`);
    const refused = await person.press('Old sign up', 'old-form-refused', formWithButton(person.page, 'Old sign up'));
    expect(refused.status()).toBe(403);
    expect(await person.text()).toContain(CLOSED_TEXT);
    expect(emailsTo(closedSite.smtp, { to: ada.email, subject: /./ })).toHaveLength(0);
    await person.signIn(ada.username, ada.password, { shot: 'login-refused' });
    expect(await person.formErrors()).toEqual(['The username and/or password you specified are not correct.']);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('existing accounts still sign in when signup is closed', async () => {
    await ownerCreated;
    const person = await Person.open(browser, closedSite);
    await person.signIn(owner.username, owner.password);
    expect(person.pathname()).toBe(`/users/${owner.username}/`);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('the domain allowlist refuses an address at another domain with a form error, stores nothing, and takes one at the allowed domain', async () => {
    const bob = newAccount('bob');
    const elsewhere = `${bob.username}@example.org`;
    const person = await Person.open(browser, allowlistSite);
    await person.visit('/accounts/signup/', 'signup-form');
    await person.fill({ email: elsewhere, username: bob.username, password1: bob.password, password2: bob.password });
    const refused = await person.press('Sign up', 'other-domain-refused');
    expect(refused.status()).toBe(400);
    expect(await person.formErrors()).toEqual(['Sign-up is limited to addresses at: example.com.']);
    expect(await person.page.locator('#id_email').getAttribute('aria-invalid')).toBe('true');
    expect(await person.page.locator('#id_email').inputValue()).toBe(elsewhere);
    expect(emailsTo(allowlistSite.smtp, { to: elsewhere, subject: /./ })).toHaveLength(0);

    // Nothing was stored: the same username is still free.
    await person.fill({ email: bob.email, password1: bob.password, password2: bob.password });
    await person.press('Sign up', 'allowed-domain-signed-up');
    // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
    expect(person.pathname()).toBe(`/users/${bob.username}/`);
    expect(await person.heading()).toBe(bob.username);

    // Nor can the rule be sidestepped by adding an address at another domain afterwards.
    await person.visit('/accounts/email/', 'email-page');
    await person.fill({ email: elsewhere }, formWithButton(person.page, 'Add email'));
    const notAdded = await person.press('Add email', 'add-other-domain-refused');
    expect(notAdded.status()).toBe(400);
    expect(await person.formErrors()).toEqual(['Sign-up is limited to addresses at: example.com.']);
    expect(await person.text()).not.toContain(`${elsewhere} Unverified`);
    await person.visit('/accounts/email/', 'email-page-unchanged');
    expect(await person.page.locator('input[name=email][type=radio]').count()).toBe(1);
    await person.close();
  }, JOURNEY_TIMEOUT_MS);
});
