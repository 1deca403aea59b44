/**
 * The admin area in Chromium against the example site: a superuser with an authenticator app signs
 * in to the admin (password, then the code), adds a social application for a real OpenID provider
 * (oidc-provider on loopback), opens every list the index links to, and a person then signs in with
 * the new app, with no restart; the superuser makes them a view-only staff member, who sees the
 * users but no way to change them, and whose browser's POST to a change form (with a valid CSRF
 * token) is refused and changes nothing; a user who is not staff gets 403. A second site with
 * ADMIN_FORCE_ALLAUTH sends the admin login through the account login and its code page. Every page
 * is screenshotted in the e2e artifacts; admin-pages.test.ts and admin-access-pages.test.ts walk
 * through the pages beyond the lists.
 *
 * The superuser's journey runs once, on PostgreSQL when TEST_DATABASE_URL names a server (what a
 * deployed site runs on; the admin's pages are tested on both databases without a browser); the
 * forced login, which adds no query of its own, on SQLite.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestOidcProvider } from '../packages/latchkey/src/testing/oidc-provider.js';
import { expectRowsNaming, filterBy, openFromIndex, postToThisPage, rowTexts, search } from './admin-journey.js';
import { freshCode, PERIOD_MS, sleep } from './authenticator-app.js';
import { browserTestsEnabled, deployedDatabase, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, PASSWORD, Person, SETUP_TIMEOUT_MS, startSiteAndBrowser, uniqueName } from './journey.js';

const CLIENT = { client_id: 'admin-added-app', client_secret: uniqueName('provider-secret-') };

/** A superuser's authenticator app: its secret, and the time step its activation used (spent). */
interface AuthenticatorApp {
  secret: string;
  step: number;
}

/** Signs the superuser in on the account pages and turns on an authenticator app, then signs out. */
async function withAuthenticatorApp(browser: Browser, site: RunningSite, username: string): Promise<AuthenticatorApp> {
  const person = await Person.open(browser, site, 'root-setup');
  await person.signIn(username, PASSWORD, { shot: 'root-login' });
  await person.visit('/accounts/2fa/totp/activate/', 'activate-form');
  await person.page.locator('details summary').click();
  const secret = (await person.page.locator('#mfa-totp-secret').innerText()).trim();
  const activation = await freshCode(secret, 3_000);
  await person.fill({ code: activation.code });
  await person.press('Activate', 'activated');
  await person.close();
  return { secret, step: activation.step };
}

/** The code page after a password: the app's code of a later time step than the activation's, which is spent. */
async function giveCode(person: Person, app: AuthenticatorApp, shot: string): Promise<void> {
  expect(person.pathname()).toBe('/accounts/2fa/authenticate/');
  const nextStepAt = (app.step + 1) * PERIOD_MS;
  if (Date.now() < nextStepAt + 1000) await sleep(nextStepAt + 1000 - Date.now());
  await person.fill({ code: (await freshCode(app.secret, 3_000)).code });
  await person.press('Sign in', shot, person.page.locator('form', { has: person.page.locator('[name=code]') }));
}

/** Makes the superuser (PASSWORD, no app yet) with the management command. */
async function createSuperuser(site: RunningSite, username: string): Promise<void> {
  await site.manage(['createsuperuser', '--username', username, '--email', `${username}@example.com`, '--noinput'], { LATCHKEY_SUPERUSER_PASSWORD: PASSWORD });
}

describe.runIf(browserTestsEnabled()).each([deployedDatabase()])('the admin area, on %s', (database) => {
  const root = uniqueName('root');
  const dana = { sub: uniqueName('dana-at-corp'), username: uniqueName('dana'), email: `${uniqueName('dana')}@corp.example` };
  let provider: TestOidcProvider | undefined;
  let site: RunningSite;
  let browser: Browser;

  beforeAll(async () => {
    const redirectUris: string[] = [];
    provider = await startTestOidcProvider({
      clients: [{ ...CLIENT, redirect_uris: () => redirectUris }],
      accounts: [{ sub: dana.sub, claims: { email: dana.email, email_verified: true, name: 'Dana at Corp', preferred_username: dana.username } }],
    });
    ({ site, browser } = await startSiteAndBrowser({ database }));
    redirectUris.push(`${site.url}/accounts/oidc/corp/login/callback/`);
    await createSuperuser(site, root);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop(), provider?.close()]);
  }, SETUP_TIMEOUT_MS);

  it('lets a superuser in with their code, add a social application, and a person then signs in with it; a view-only staff member can change nothing', async () => {
    const app = await withAuthenticatorApp(browser, site, root);
    const admin = await Person.open(browser, site, 'superuser');
    await admin.visit('/admin/', 'admin-login-form');
    expect(admin.pathname()).toBe('/admin/login/');
    await admin.fill({ username: root, password: PASSWORD });
    await admin.press('Log in', 'admin-code-page');
    await giveCode(admin, app, 'admin-index');
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
    for (const label of pages) await openFromIndex(admin, label, `page-${label.toLowerCase().replaceAll(' ', '-')}`);

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
    await openFromIndex(admin, 'Users', 'users');
    await search(admin, { q: dana.username }, 'users-search');
    await admin.follow(dana.username, 'dana-change', admin.page.locator('main table'));
    await admin.fill({ is_staff: true });
    await admin.page.locator(`input[name=permissions][value="users.user:view"]`).check();
    await admin.press('Save', 'dana-saved', admin.page.locator('main form').first());
    expect(await admin.messages()).toContain(`The user “${dana.username}” was changed.`);

    // Dana, signed in through the provider again, sees the users and nothing to change.
    provider!.nextLogin = dana.sub;
    const viewer = await Person.open(browser, site, 'viewer');
    await viewer.visit('/accounts/oidc/corp/login/?next=%2Fadmin%2F', 'viewer-continue');
    await viewer.press('Continue', 'viewer-admin-index');
    expect(viewer.pathname()).toBe('/admin/');
    await viewer.follow('Users', 'viewer-users', viewer.page.locator('main'));
    expect(await viewer.page.getByRole('link', { name: 'Add user' }).count()).toBe(0);
    expect(await viewer.page.getByRole('button', { name: 'Go' }).count()).toBe(0);
    await viewer.follow(dana.username, 'viewer-own-page', viewer.page.locator('main table'));
    expect(await viewer.page.getByRole('button', { name: 'Save' }).count()).toBe(0);

    // Nor can a script in Dana's browser change anything: its POST to the change form, with the
    // CSRF cookie's token, meets the permission check and is refused.
    const post = await postToThisPage(viewer, { name: 'Mallory', email: dana.email, is_active: 'on', is_staff: 'on', is_superuser: 'on' });
    expect(post.status).toBe(403);
    expect(post.text).toContain('You do not have permission to view or change this.');
    // Still view-only: a superuser's page stays closed to Dana.
    const closed = await viewer.visit('/admin/socialaccount/socialapp/', 'viewer-still-refused');
    expect(closed.status()).toBe(403);
    await viewer.close();

    // The superuser sees Dana as before: the provider's name, staff, not superuser.
    await search(admin, { q: dana.username }, 'dana-unchanged');
    await expectRowsNaming(admin, [dana.username]);
    expect((await rowTexts(admin))[0]).toContain('Dana at Corp');
    await filterBy(admin, 'Superuser status', 'Yes', 'dana-not-superuser');
    expect(await rowTexts(admin)).toEqual(['No user matches.']);
    await admin.close();
  }, JOURNEY_TIMEOUT_MS * 2);
});

describe.runIf(browserTestsEnabled())('the admin area with ADMIN_FORCE_ALLAUTH', () => {
  const root = uniqueName('root');
  let site: RunningSite;
  let browser: Browser;

  beforeAll(async () => {
    ({ site, browser } = await startSiteAndBrowser({ env: { LATCHKEY_ADMIN_FORCE_ALLAUTH: 'true' } }));
    await createSuperuser(site, root);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), site?.stop()]);
  }, SETUP_TIMEOUT_MS);

  it('signs in to the admin through the account login and its code page', async () => {
    const app = await withAuthenticatorApp(browser, site, root);
    const admin = await Person.open(browser, site, 'forced');
    await admin.visit('/admin/', 'forced-redirect');
    expect(admin.pathname()).toBe('/accounts/login/');
    await admin.fill({ login: root, password: PASSWORD });
    await admin.press('Sign in', 'forced-code-page');
    await giveCode(admin, app, 'forced-admin-index');
    expect(admin.pathname()).toBe('/admin/');
    expect(await admin.heading()).toBe('Site administration');
    await admin.close();
  }, JOURNEY_TIMEOUT_MS * 2);
});
