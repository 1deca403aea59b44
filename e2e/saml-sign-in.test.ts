/**
 * SAML 2.0 sign-in in Chromium against the example site: a person signs up from the login page's
 * "Acme SAML" link and its Continue button, through the test identity provider and back, signs
 * out and in again to the same account from a browser that has never seen the site; and, once
 * they have an authenticator app, is asked for its code after the identity provider.
 *
 * The identity provider (packages/latchkey/src/testing/saml-idp.ts) runs on `localhost` while the
 * site runs on 127.0.0.1: two different sites to the browser, so the IdP's auto-posting page
 * makes a real cross-site POST to the ACS, which leaves the SameSite=Lax session cookie behind.
 * That is what the ACS's bounce to acs/finish/ (a GET that carries the cookie) is for, and the
 * journeys check the cookies each of the two requests carried. The site reads the IdP's metadata
 * from its URL; the IdP learns the site from the site's own metadata, as an IdP administrator
 * imports it.
 *
 * The journeys run once, on PostgreSQL when TEST_DATABASE_URL names a server, else SQLite (the SAML
 * pages and flows are tested on both databases without a browser).
 */
import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSamlIdp, type ImportedSpMetadata, type SamlPerson, type TestSamlIdp } from '../packages/latchkey/src/testing/saml-idp.js';
import { activateAuthenticatorApp, passCodePage } from './app-code-journey.js';
import { PERIOD_MS } from './authenticator-app.js';
import { browserTestsEnabled, expectNoConsoleErrors, screenshot, deployedDatabase, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, startSiteAndBrowser, uniqueName } from './journey.js';

const ORGANIZATION = 'acme';
const APP_NAME = 'Acme SAML';
const SAML_PATH = `/accounts/saml/${ORGANIZATION}/`;
const LOGIN_PATH = `${SAML_PATH}login/`;
const ACS_PATH = `${SAML_PATH}acs/`;
const FINISH_PATH = `${SAML_PATH}acs/finish/`;
/** The journey with the app may wait for a time step in real time, on top of what any journey may take. */
const MFA_JOURNEY_TIMEOUT_MS = JOURNEY_TIMEOUT_MS + PERIOD_MS;

/** A person at the identity provider: what it asserts, and the username the site makes of it. */
interface AcmePerson {
  username: string;
  email: string;
  fullName: string;
  saml: SamlPerson;
}

function acmePerson(prefix: string, givenName: string, surname: string): AcmePerson {
  const username = uniqueName(prefix);
  const email = `${username}@acme.example`;
  return {
    username,
    email,
    fullName: `${givenName} ${surname}`,
    // An opaque, persistent NameID, as most IdPs send: the account's uid, not its address.
    saml: { nameId: `${username}-at-acme`, attributes: { email, email_verified: 'true', givenName, sn: surname, uid: username } },
  };
}

/** A navigation of the page's main frame, with the cookies the browser sent along. */
interface Navigation {
  method: string;
  url: URL;
  cookies: Promise<string | null>;
}

describe.runIf(browserTestsEnabled()).each([deployedDatabase()])('SAML sign-in through an identity provider on another site, on %s', (database) => {
  const ada = acmePerson('ada', 'Ada', 'Lovelace');
  const cleo = acmePerson('cleo', 'Cleo', 'Hart');
  let idp: TestSamlIdp | undefined;
  let site: RunningSite;
  let browser: Browser;
  let imported: ImportedSpMetadata;

  beforeAll(async () => {
    // The site runs on 127.0.0.1, so the IdP goes to localhost: another site, not just another port.
    idp = await startTestSamlIdp({ host: 'localhost' });
    const app = {
      provider_id: idp.entityId,
      name: APP_NAME,
      client_id: ORGANIZATION,
      settings: {
        idp: { entity_id: idp.entityId, metadata_url: idp.metadataUrl },
        attribute_mapping: { email: 'email', email_verified: 'email_verified', first_name: 'givenName', last_name: 'sn', username: 'uid' },
      },
    };
    ({ site, browser } = await startSiteAndBrowser({ database, env: { LATCHKEY_SOCIALACCOUNT_PROVIDERS: JSON.stringify({ saml: { APPS: [app] } }) } }));
    // What the IdP's administrator does: import the service provider's metadata from its URL.
    const metadata = await fetch(`${site.url}${SAML_PATH}metadata/`);
    expect(metadata.status).toBe(200);
    imported = idp.importSpMetadata(await metadata.text());
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop(), idp?.close()]);
  }, SETUP_TIMEOUT_MS);

  /** Clicks Continue and waits until the browser is back on the site with a page (not a redirect): the IdP's page is on the way. */
  async function continueThroughIdp(person: Person, shot: string): Promise<Navigation[]> {
    const navigations: Navigation[] = [];
    const onRequest = (request: Request) => {
      if (!request.isNavigationRequest() || request.frame() !== person.page.mainFrame()) return;
      const cookies = request.headerValue('cookie');
      cookies.catch(() => undefined);
      navigations.push({ method: request.method(), url: new URL(request.url()), cookies });
    };
    person.page.on('request', onRequest);
    try {
      const backOnSite = person.page.waitForResponse(
        (response) =>
          response.request().isNavigationRequest() &&
          response.frame() === person.page.mainFrame() &&
          new URL(response.url()).origin === site.url &&
          !(response.status() >= 300 && response.status() < 400),
        { timeout: 20_000 },
      );
      backOnSite.catch(() => undefined);
      await person.page.getByRole('button', { name: 'Continue', exact: true }).click();
      await backOnSite.catch((error: unknown) => {
        throw new Error(`The browser did not come back to the site: ${trailOf(navigations)}`, { cause: error });
      });
      await person.page.waitForLoadState('load');
    } finally {
      person.page.off('request', onRequest);
    }
    await screenshot(person.page, `${shot}-back-from-idp`);
    expectNoConsoleErrors(person.page);
    return navigations;
  }

  function trailOf(navigations: Navigation[]): string {
    return navigations.map((navigation) => `${navigation.method} ${navigation.url.href}`).join(' -> ');
  }

  /**
   * From the login page: the app's link, the page with the Continue button, and the trip to the
   * IdP (signed in there as `person`) and back. Checks that the browser really went to the IdP's
   * SSO URL, that its POST to the ACS carried no session cookie, and that acs/finish/ did.
   */
  async function signInThroughIdp(person: Person, account: AcmePerson, shot: string): Promise<void> {
    idp!.signInAs(account.saml);
    await person.visit('/accounts/login/', `${shot}-login-page`);
    await person.follow(APP_NAME, `${shot}-continue-page`, person.page.locator('main'));
    expect(person.pathname()).toBe(LOGIN_PATH);
    expect(await person.heading()).toBe(`Sign in via ${APP_NAME}`);
    expect(await person.text()).toContain(`You are about to sign in using a third-party account from ${APP_NAME}.`);

    const navigations = await continueThroughIdp(person, shot);
    const trail = trailOf(navigations);
    const toIdp = navigations.find((navigation) => navigation.url.origin === idp!.origin);
    expect(toIdp?.url.pathname, trail).toBe('/sso');
    expect(toIdp?.url.searchParams.has('SAMLRequest'), trail).toBe(true);
    const acs = navigations.find((navigation) => navigation.url.href === `${site.url}${ACS_PATH}`);
    expect(acs?.method, trail).toBe('POST');
    const finish = navigations.find((navigation) => navigation.url.href === `${site.url}${FINISH_PATH}`);
    expect(finish?.method, trail).toBe('GET');
    expect(navigations.indexOf(toIdp!)).toBeLessThan(navigations.indexOf(acs!));
    expect(navigations.indexOf(acs!)).toBeLessThan(navigations.indexOf(finish!));
    // The cross-site POST leaves the session behind; the same-site bounce brings it, and the parked response's cookie.
    expect((await acs!.cookies) ?? '').not.toMatch(/\bsessionid=/);
    expect(await finish!.cookies).toMatch(/\bsessionid=/);
    expect(await finish!.cookies).toMatch(/\bsaml_acs=/);
  }

  async function expectSignedIn(person: Person, account: AcmePerson, shot = 'home-signed-in'): Promise<void> {
    // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
    expect(person.pathname()).toBe(`/users/${account.username}/`);
    expect(await person.heading()).toBe(account.username);
    expect(await person.messages()).toEqual([`Successfully signed in as ${account.username}.`]);
    // The name and address come from the IdP's attributes, through the app's attribute_mapping.
    expect(await person.page.locator('#profile-name').innerText()).toBe(account.fullName);
    expect(await person.page.locator('#profile-email').innerText()).toBe(account.email);
    expect(await person.homeStatus(shot)).toContain(`Signed in as ${account.username}.`);
  }

  async function signOut(person: Person, shot: string): Promise<void> {
    await person.visit('/accounts/logout/', `${shot}-confirmation`);
    await person.press('Sign out', shot, person.page.locator('main'));
    expect(await person.text()).toContain('You are not signed in.');
  }

  it('signs a new person up through the IdP with no form to fill, and signs them in again to the same account', async () => {
    // The IdP read the site's metadata: the ACS it posts to and the entity id it addresses.
    expect(imported.acsUrl).toBe(`${site.url}${ACS_PATH}`);
    expect(imported.entityId).toBe(`${site.url}${SAML_PATH}metadata/`);

    const first = await Person.open(browser, site, 'first-visit');
    // The page with the button lets its form lead to the IdP, and nowhere else.
    const continuePage = await first.visit(LOGIN_PATH, 'continue-page-policy');
    expect(continuePage.headers()['content-security-policy'] ?? '').toContain(`form-action 'self' ${idp!.origin};`);

    await signInThroughIdp(first, ada, 'signup');
    await expectSignedIn(first, ada);
    // The address the IdP asserted as verified is verified here too.
    await first.visit('/accounts/email/', 'email-addresses');
    expect(await first.page.locator('main table').innerText()).toMatch(new RegExp(`${ada.email.replaceAll('.', '\\.')}\\s+Verified, primary`));
    await signOut(first, 'signed-out');
    await first.close();

    // Signed out, in a browser that has never seen the site: the IdP's word leads to the same account.
    const person = await Person.open(browser, site, 'returning');
    await signInThroughIdp(person, ada, 'login');
    await expectSignedIn(person, ada);
    await person.visit('/accounts/3rdparty/', 'connections');
    const connections = person.page.locator('main label');
    expect(await connections.allInnerTexts()).toEqual([`${APP_NAME}: ${ada.saml.nameId}`]);
    await signOut(person, 'signed-out');
    await person.close();
  }, JOURNEY_TIMEOUT_MS);

  it('after an authenticator app is turned on, asks for its code after the IdP, and the right code signs in', async () => {
    const person = await Person.open(browser, site);
    await signInThroughIdp(person, cleo, 'signup');
    await expectSignedIn(person, cleo);

    // Right after the sign-in, so no reauthentication is asked; the address is verified already.
    const app = await activateAuthenticatorApp(person);
    await signOut(person, 'signed-out');

    // The IdP vouches for them, but the site asks for the app's code before signing them in.
    await signInThroughIdp(person, cleo, 'login');
    await passCodePage(person, app);
    await expectSignedIn(person, cleo, 'home-signed-in-after-code');
    await person.close();
  }, MFA_JOURNEY_TIMEOUT_MS);
});
