/**
 * The admin's pages beyond the lists (admin.test.ts opens those), in Chromium against the example
 * site, reached as a person reaches them: from the index's links, the lists' rows and the pages'
 * own links. A superuser adds a user, sets their password, deletes them after the confirmation and
 * reads what the audit trail kept of it; runs the bulk actions (mark an address verified,
 * deactivate and delete users) through their confirmation pages; changes and deletes a social
 * application and deletes a person's social account. (admin-access-pages.test.ts has the API
 * tokens, authenticators and sessions.) Each page is screenshotted in the e2e artifacts, and each
 * step is checked where a person would check it: the message, the list, the other person's
 * browser, their mail.
 *
 * These journeys run once, on PostgreSQL when TEST_DATABASE_URL names a server (the database a
 * deployed site runs on) and on SQLite otherwise; admin.test.ts runs its journey on both. The
 * admin's pages are tested on both databases in packages/latchkey/src/http/admin/; here it is the
 * browser, the real process and its mail that count, and CI's time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOidcProvider, type TestOidcProvider } from '../packages/latchkey/src/testing/oidc-provider.js';
import { expectRowsNaming, filterBy, logInToAdmin, openFromIndex, rowTexts, runAction, search, signedUp, useSuperuser } from './admin-journey.js';
import { browserTestsEnabled, deployedDatabase } from './harness.js';
import { JOURNEY_TIMEOUT_MS, NEW_PASSWORD, PASSWORD, Person, SETUP_TIMEOUT_MS, expectMessage, newAccount, uniqueName, useSiteAndBrowser, waitForEmail, type Account } from './journey.js';

const CLIENT = { client_id: 'admin-pages-app', client_secret: uniqueName('provider-secret-') };

describe.runIf(browserTestsEnabled())(`the admin's user, address and social pages, on ${deployedDatabase()}`, () => {
  const journey = useSiteAndBrowser({ database: deployedDatabase() });
  const keeper = useSuperuser(journey);
  const lab = { sub: uniqueName('lee-at-lab'), username: uniqueName('lee'), email: `${uniqueName('lee')}@lab.example` };
  let provider: TestOidcProvider | undefined;

  beforeAll(async () => {
    provider = await startTestOidcProvider({
      clients: [{ ...CLIENT, redirect_uris: [`${journey.site.url}/accounts/oidc/lab/login/callback/`] }],
      accounts: [{ sub: lab.sub, claims: { email: lab.email, email_verified: true, name: 'Lee at Lab', preferred_username: lab.username } }],
    });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await provider?.close();
  }, SETUP_TIMEOUT_MS);

  it('adds a user, sets their password, deletes them after the confirmation, and shows it all in the audit trail', async () => {
    const admin = await Person.open(journey.browser, journey.site, 'staff');
    await logInToAdmin(admin, keeper, PASSWORD);
    const ada = newAccount('ada');

    await openFromIndex(admin, 'Users', 'users');
    await admin.follow('Add user', 'user-add-form', admin.page.locator('main'));
    expect(await admin.heading()).toBe('Add user');
    await admin.fill({ username: ada.username, email: ada.email, password1: PASSWORD, password2: PASSWORD });
    await admin.press('Save', 'user-added');
    expect(await admin.heading()).toBe('Change user');
    await expectMessage(admin, `The user “${ada.username}” was added.`);
    expect(await admin.text()).toContain(`Email ${ada.email}`);
    const id = /\/admin\/users\/user\/(\d+)\/change\/$/.exec(admin.pathname())?.[1];
    expect(id).toBeDefined();

    await admin.follow('Set or remove the password', 'password-form', admin.page.locator('main'));
    expect(await admin.heading()).toBe(`Change password: ${ada.username}`);
    await admin.fill({ password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    await admin.press('Change password', 'password-changed');
    await expectMessage(admin, 'Password changed successfully');

    // Ada signs in with the password the admin set.
    const person = await Person.open(journey.browser, journey.site, 'ada');
    await person.signIn(ada.username, NEW_PASSWORD);
    expect(person.pathname()).toBe(`/users/${ada.username}/`);

    await admin.follow('Delete', 'delete-confirmation', admin.page.locator('main'));
    expect(await admin.heading()).toBe('Are you sure?');
    const summary = await admin.text();
    expect(summary).toContain(`Are you sure you want to delete the user “${ada.username}”?`);
    expect(summary).toContain('Email addresses: 1');
    expect(summary).toContain('Sessions: 1');
    await admin.press('Yes, I’m sure', 'user-deleted');
    await expectMessage(admin, `The user “${ada.username}” was deleted.`);
    await search(admin, { q: ada.username }, 'user-gone');
    expect(await rowTexts(admin)).toEqual(['No user matches.']);
    expect(await person.homeStatus('signed-out')).toContain('You are not signed in.');
    await person.close();

    // The audit trail, by the user's id (from the address bar) and then by the event too.
    await openFromIndex(admin, 'Audit trail', 'audit-trail');
    await search(admin, { user: id! }, 'audit-by-user', 'Filter');
    expect(await admin.text()).toContain(`Showing user #${id} (no such user now)`);
    await filterBy(admin, 'Event', 'admin_user_changed', 'audit-by-user-and-event');
    const changes = (await rowTexts(admin)).map((row) => {
      expect(row).toContain('admin_user_changed');
      return /"change":"(\w+)"/.exec(row)?.[1];
    });
    expect(changes).toEqual(['deleted', 'password_set', 'added']);
    await admin.follow('All users', 'audit-by-event', admin.page.getByRole('search'));
    expect(await admin.text()).not.toContain('Showing user #');
    for (const row of await rowTexts(admin)) expect(row).toContain('admin_user_changed');
    await admin.close();
  }, JOURNEY_TIMEOUT_MS);

  it('marks an address verified, then deactivates and deletes users in bulk, each after its confirmation page', async () => {
    const base = uniqueName('bulk');
    const [bea, cal] = ['a', 'b'].map((suffix): Account => ({ username: `${base}${suffix}`, email: `${base}${suffix}@example.com`, password: PASSWORD })) as [Account, Account];
    const people = [await signedUp(journey, bea, 'bea'), await signedUp(journey, cal, 'cal')];
    const admin = await Person.open(journey.browser, journey.site, 'staff');
    await logInToAdmin(admin, keeper, PASSWORD);

    // Both signed up without confirming their address: Bea's is vouched for.
    await openFromIndex(admin, 'Email addresses', 'email-addresses');
    await search(admin, { q: base }, 'addresses-found');
    await filterBy(admin, 'Verified', 'No', 'addresses-unverified');
    await expectRowsNaming(admin, [bea.email, cal.email]);
    await runAction(admin, 'mark_verified', [bea.email], 'mark-verified-confirmation');
    expect(await admin.heading()).toBe('Are you sure?');
    await expectRowsNaming(admin, [bea.email]);
    await admin.press('Yes, I’m sure', 'marked-verified');
    await expectMessage(admin, 'Marked 1 email address as verified.');
    await expectRowsNaming(admin, [cal.email]);
    await filterBy(admin, 'Verified', 'Yes', 'addresses-verified');
    await expectRowsNaming(admin, [bea.email]);

    await openFromIndex(admin, 'Users', 'users');
    await search(admin, { q: base }, 'users-found');
    await expectRowsNaming(admin, [bea.username, cal.username]);
    await runAction(admin, 'deactivate', [bea.username, cal.username], 'deactivate-confirmation');
    expect(await admin.heading()).toBe('Are you sure?');
    await expectRowsNaming(admin, [bea.username, cal.username]);
    expect(await admin.text()).toContain('Each user is signed out everywhere at once');
    await admin.press('Yes, I’m sure', 'deactivated');
    await expectMessage(admin, /^Deactivated 2 users: /);
    await filterBy(admin, 'Active', 'No', 'users-inactive');
    await expectRowsNaming(admin, [bea.username, cal.username]);
    for (const person of people) expect(await person.homeStatus('signed-out-by-deactivation')).toContain('You are not signed in.');

    await runAction(admin, 'delete_selected', [bea.username, cal.username], 'delete-confirmation');
    expect(await admin.heading()).toBe('Are you sure?');
    await expectRowsNaming(admin, [bea.username, cal.username]);
    expect(await admin.text()).toContain('This cannot be undone.');
    await admin.press('Yes, I’m sure', 'deleted');
    await expectMessage(admin, /^Deleted 2 users: /);
    expect(await rowTexts(admin)).toEqual(['No user matches.']);
    await Promise.all([admin.close(), ...people.map((person) => person.close())]);
  }, JOURNEY_TIMEOUT_MS);

  it("changes and deletes a social application, and deletes a person's social account after the confirmation", async () => {
    const admin = await Person.open(journey.browser, journey.site, 'staff');
    await logInToAdmin(admin, keeper, PASSWORD);
    await openFromIndex(admin, 'Social applications', 'social-apps');
    await admin.follow('Add social application', 'social-app-add', admin.page.locator('main'));
    await admin.fill({ provider: 'openid_connect', provider_id: 'lab', name: 'Lab SSO', client_id: CLIENT.client_id, secret: CLIENT.client_secret, settings: JSON.stringify({ server_url: provider!.issuer }) });
    await admin.press('Save', 'social-app-added');
    await expectMessage(admin, 'The social application “Lab SSO” was added.');

    // Lee signs up through it.
    provider!.nextLogin = lab.sub;
    const lee = await Person.open(journey.browser, journey.site, 'lee');
    await lee.visit('/accounts/login/', 'login-page');
    await lee.follow('Lab SSO', 'continue-page', lee.page.locator('main'));
    await lee.press('Continue', 'signed-up');
    expect(lee.pathname()).toBe(`/users/${lab.username}/`);

    await openFromIndex(admin, 'Social accounts', 'social-accounts');
    await search(admin, { q: lab.sub }, 'social-account-found');
    await admin.follow(lab.sub, 'social-account', admin.page.locator('main table'));
    expect(await admin.heading()).toBe(`Social account ${lab.sub}`);
    const details = await admin.text();
    expect(details).toContain(`User ${lab.username}`);
    expect(details).toContain(lab.email);
    await admin.follow('Delete', 'social-account-delete-confirmation', admin.page.locator('main'));
    expect(await admin.text()).toContain('It is their last way to sign in');
    await admin.press('Yes, I’m sure', 'social-account-deleted');
    await expectMessage(admin, `account of “${lab.username}” was removed; they were told by email.`);
    await waitForEmail(journey.site.smtp, { to: lab.email, subject: 'was disconnected from your account' });

    await openFromIndex(admin, 'Social applications', 'social-apps-again');
    await admin.follow('Change Lab SSO', 'social-app-change', admin.page.locator('main table'));
    expect(await admin.heading()).toBe('Change social application');
    expect(await admin.text()).toContain('Currently: set.');
    expect(await admin.page.content()).not.toContain(CLIENT.client_secret);
    await admin.fill({ name: 'Lab SSO (retired)' });
    await admin.press('Save', 'social-app-changed');
    await expectMessage(admin, 'The social application “Lab SSO (retired)” was changed (name).');
    await admin.follow('Change Lab SSO (retired)', 'social-app-change-again', admin.page.locator('main table'));
    await admin.follow('Delete', 'social-app-delete-confirmation', admin.page.locator('main'));
    expect(await admin.text()).toContain('0 social accounts sign in through “lab”');
    await admin.press('Yes, I’m sure', 'social-app-deleted');
    await expectMessage(admin, 'The social application “Lab SSO (retired)” was deleted.');
    expect(await rowTexts(admin)).toEqual(['No social application in the database.']);

    // Gone from the login page too.
    await lee.visit('/accounts/login/', 'login-page-without-app');
    expect(await lee.page.getByRole('link', { name: /^Lab SSO/ }).count()).toBe(0);
    await Promise.all([admin.close(), lee.close()]);
  }, JOURNEY_TIMEOUT_MS);
});
