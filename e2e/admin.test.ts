/**
 * The admin area in Chromium against the example site: a superuser with an authenticator app signs
 * in to the admin (password, then the code), adds a social application for a real OpenID provider
 * (oidc-provider on loopback), and a person then signs in with it, with no restart; the superuser
 * makes a view-only staff member, who sees the users but no way to change them; a user who is not
 * staff gets 403. A second site with ADMIN_FORCE_ALLAUTH sends the admin login through the account
 * login and its code page. Every page is screenshotted in the e2e artifacts.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestOidcProvider } from '../packages/latchkey/src/testing/oidc-provider.js';
import { freshCode, PERIOD_MS, sleep } from './authenticator-app.js';
import { browserTestsEnabled, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, PASSWORD, Person, SETUP_TIMEOUT_MS, startSitesAndBrowser, uniqueName } from './journey.js';

const CLIENT = { client_id: 'admin-added-app', client_secret: uniqueName('provider-secret-') };

describe.runIf(browserTestsEnabled())('the admin area', () => {
  const root = uniqueName('root');
  const dana = { sub: uniqueName('dana-at-corp'), username: uniqueName('dana'), email: `${uniqueName('dana')}@corp.example` };
  let provider: TestOidcProvider | undefined;
  let site: RunningSite;
  let forced: RunningSite;
  let browser: Browser;
  /** The superuser's authenticator app on each site (one database each), and the time step its activation used. */
  const apps = new Map<RunningSite, { secret: string; step: number }>();

  beforeAll(async () => {
    const redirectUris: string[] = [];
    provider = await startTestOidcProvider({
      clients: [{ ...CLIENT, redirect_uris: () => redirectUris }],
      accounts: [{ sub: dana.sub, claims: { email: dana.email, email_verified: true, name: 'Dana at Corp', preferred_username: dana.username } }],
    });
    ({ sites: [site, forced], browser } = await startSitesAndBrowser([{}, { env: { LATCHKEY_ADMIN_FORCE_ALLAUTH: 'true' } }]) as { sites: [RunningSite, RunningSite]; browser: Browser });
    redirectUris.push(`${site.url}/accounts/oidc/corp/login/callback/`);
    for (const each of [site, forced]) {
      await each.manage(['createsuperuser', '--username', root, '--email', `${root}@example.com`, '--noinput'], { LATCHKEY_SUPERUSER_PASSWORD: PASSWORD });
    }
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop(), forced?.stop(), provider?.close()]);
  }, SETUP_TIMEOUT_MS);

  /** Signs the superuser in on the account pages and turns on an authenticator app, then signs out. */
  async function withAuthenticatorApp(on: RunningSite): Promise<void> {
    const person = await Person.open(browser, on, 'root-setup');
    await person.signIn(root, PASSWORD, { shot: 'root-login' });
    await person.visit('/accounts/2fa/totp/activate/', 'activate-form');
    await person.page.locator('details summary').click();
    const secret = (await person.page.locator('#mfa-totp-secret').innerText()).trim();
    const activation = await freshCode(secret, 3_000);
    await person.fill({ code: activation.code });
    await person.press('Activate', 'activated');
    await person.close();
    apps.set(on, { secret, step: activation.step });
  }

  /** The code page after a password: the app's code of a later time step than the activation's, which is spent. */
  async function giveCode(person: Person, on: RunningSite, shot: string): Promise<void> {
    expect(person.pathname()).toBe('/accounts/2fa/authenticate/');
    const app = apps.get(on)!;
    const nextStepAt = (app.step + 1) * PERIOD_MS;
    if (Date.now() < nextStepAt + 1000) await sleep(nextStepAt + 1000 - Date.now());
    await person.fill({ code: (await freshCode(app.secret, 3_000)).code });
    await person.press('Sign in', shot, person.page.locator('form', { has: person.page.locator('[name=code]') }));
  }

  it('lets a superuser in with their code, add a social application, and a person then signs in with it', async () => {
    await withAuthenticatorApp(site);
    const admin = await Person.open(browser, site, 'superuser');
    await admin.visit('/admin/', 'admin-login-form');
    expect(admin.pathname()).toBe('/admin/login/');
    await admin.fill({ username: root, password: PASSWORD });
    await admin.press('Log in', 'admin-code-page');
    await giveCode(admin, site, 'admin-index');
    expect(admin.pathname()).toBe('/admin/');
    expect(await admin.heading()).toBe('Site administration');

    await admin.follow('Social applications', 'socialapp-list', admin.page.locator('main'));
    await admin.follow('Add social application', 'socialapp-add', admin.page.locator('main'));
    await admin.fill({ provider: 'openid_connect', provider_id: 'corp', name: 'Corp SSO', client_id: CLIENT.client_id, secret: CLIENT.client_secret, settings: JSON.stringify({ server_url: provider!.issuer }) });
    await admin.press('Save', 'socialapp-saved');
    expect(await admin.text()).toContain('Corp SSO');
    expect(await admin.page.content()).not.toContain(CLIENT.client_secret);

    // Every page the index links to opens, each screenshotted for the artifacts.
    const pages = ['Users', 'Email addresses', 'Social applications', 'Social accounts', 'Social application tokens', 'Tokens', 'Authenticators', 'Sessions', 'Audit trail'];
    for (const label of pages) {
      await admin.visit('/admin/', `index-before-${label}`);
      const opened = await admin.follow(label, `page-${label.toLowerCase().replaceAll(' ', '-')}`, admin.page.locator('main table'));
      expect(opened.status(), label).toBe(200);
    }

    // A person, in a browser of their own, signs up through the app just added.
    provider!.nextLogin = dana.sub;
    const person = await Person.open(browser, site, 'dana');
    await person.visit('/accounts/login/', 'login-with-provider');
    await person.follow('Corp SSO', 'continue-page', person.page.locator('main'));
    await person.press('Continue', 'back-from-provider');
    expect(person.pathname()).toBe(`/users/${dana.username}/`);
    expect(await person.homeStatus('dana-home')).toContain(`Signed in as ${dana.username}.`);

    // Not staff: the admin answers 403.
    const refused = await person.visit('/admin/', 'not-staff');
    expect(refused.status()).toBe(403);
    await person.close();

    // The superuser makes Dana a view-only staff member.
    await admin.visit(`/admin/users/user/?q=${encodeURIComponent(dana.username)}`, 'users-search');
    await admin.follow(dana.username, 'dana-change', admin.page.locator('main table'));
    await admin.fill({ is_staff: true });
    await admin.page.locator(`input[name=permissions][value="users.user:view"]`).check();
    await admin.press('Save', 'dana-saved', admin.page.locator('main form').first());
    expect(await admin.messages()).toContain(`The user “${dana.username}” was changed.`);
    await admin.close();

    // Dana, signed in through the provider again, sees the users and nothing to change.
    provider!.nextLogin = dana.sub;
    const viewer = await Person.open(browser, site, 'viewer');
    await viewer.visit('/accounts/oidc/corp/login/?next=%2Fadmin%2F', 'viewer-continue');
    await viewer.press('Continue', 'viewer-admin-index');
    expect(viewer.pathname()).toBe('/admin/');
    await viewer.follow('Users', 'viewer-users', viewer.page.locator('main'));
    expect(await viewer.page.getByRole('link', { name: 'Add user' }).count()).toBe(0);
    await viewer.follow(dana.username, 'viewer-own-page', viewer.page.locator('main table'));
    expect(await viewer.page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    await viewer.close();
  }, JOURNEY_TIMEOUT_MS * 2);

  it('with ADMIN_FORCE_ALLAUTH, signs in to the admin through the account login and its code page', async () => {
    await withAuthenticatorApp(forced);
    const admin = await Person.open(browser, forced, 'forced');
    await admin.visit('/admin/', 'forced-redirect');
    expect(admin.pathname()).toBe('/accounts/login/');
    await admin.fill({ login: root, password: PASSWORD });
    await admin.press('Sign in', 'forced-code-page');
    await giveCode(admin, forced, 'forced-admin-index');
    expect(admin.pathname()).toBe('/admin/');
    expect(await admin.heading()).toBe('Site administration');
    await admin.close();
  }, JOURNEY_TIMEOUT_MS * 2);
});
