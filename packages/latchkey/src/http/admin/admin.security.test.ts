/**
 * Every form of the admin under a cross-site request: a POST without the CSRF token is refused
 * (403) on each of them, for a signed-in superuser, and nothing changes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, addPerson, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import type { PageClient } from '../../testing/pages.js';
import { issueApiToken } from '../../tokens/api-tokens.js';


describe.each(testDatabaseKinds())('the admin’s forms against CSRF on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  it('refuses a POST without the CSRF token on every form, changing nothing', async () => {
    // The project serves the API layer (use_drf=y): its tokens have admin pages.
    ({ latchkey, browser } = await openAdmin(kind, { plugin: { api: {} } }));
    await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const ada = await addPerson(latchkey, 'ada');
    const address = await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'ada.work@example.com', verified: false, primary: false });
    await issueApiToken(latchkey.deps, ada);
    const totp = await activateTotpFor(latchkey, ada);
    const adaBrowser = browser.another();
    await adaBrowser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD });
    await adaBrowser.post('/accounts/2fa/authenticate/', { code: totp.code() });
    const [session] = await latchkey.deps.store.sessions.listForUser(ada.id);
    const [authenticator] = await latchkey.deps.store.authenticators.listForUser(ada.id);
    const now = latchkey.clock.now();
    const account = await latchkey.deps.store.socialAccounts.create({ userId: ada.id, provider: 'corp', uid: 'ada-at-corp', extraData: {}, dateJoined: now, lastLogin: now });
    const app = await latchkey.deps.store.socialApps.create({ provider: 'openid_connect', providerId: 'corp', name: 'Corp', clientId: 'c', sealedSecret: '', key: '', settings: { server_url: 'https://id.example.com' } });
    expect(session && authenticator).toBeTruthy();
    expect((await signInToAdmin(browser, 'root')).headers.location).toBe('/admin/');
    const before = JSON.stringify(await snapshot());

    const forms: [string, Record<string, string>][] = [
      ['/admin/logout/', {}],
      ['/admin/users/user/', { action: 'delete_selected', _selected_action: String(ada.id), post: 'yes' }],
      ['/admin/users/user/add/', { username: 'eve', email: 'eve@example.com', password1: ADMIN_PASSWORD, password2: ADMIN_PASSWORD }],
      [`/admin/users/user/${ada.id}/change/`, { name: 'Changed', is_staff: 'on', is_superuser: 'on' }],
      [`/admin/users/user/${ada.id}/password/`, { usable: '' }],
      [`/admin/users/user/${ada.id}/sessions/end/`, {}],
      [`/admin/users/user/${ada.id}/delete/`, {}],
      ['/admin/account/emailaddress/', { action: 'mark_verified', _selected_action: String(address.id), post: 'yes' }],
      ['/admin/socialaccount/socialapp/add/', { provider: 'openid_connect', provider_id: 'evil', client_id: 'x', settings: '{"server_url":"https://evil.example"}' }],
      [`/admin/socialaccount/socialapp/${app.id}/change/`, { provider: 'openid_connect', provider_id: 'corp', client_id: 'stolen', settings: '{}' }],
      [`/admin/socialaccount/socialapp/${app.id}/delete/`, {}],
      [`/admin/socialaccount/socialaccount/${account.id}/delete/`, {}],
      ['/admin/authtoken/tokenproxy/add/', { user: 'ada' }],
      [`/admin/authtoken/tokenproxy/${ada.id}/delete/`, {}],
      [`/admin/mfa/authenticator/${authenticator!.id}/delete/`, {}],
      [`/admin/sessions/session/${session!.idHash}/delete/`, {}],
      [`/admin/sessions/session/user/${ada.id}/delete/`, {}],
    ];
    for (const [url, fields] of forms) {
      expect((await browser.post(url, fields, { csrf: false })).statusCode, url).toBe(403);
    }
    expect(JSON.stringify(await snapshot())).toBe(before);
    // Still signed in: the logout without a token did nothing either.
    expect((await browser.get('/admin/')).statusCode).toBe(200);

    async function snapshot() {
      const store = latchkey.deps.store;
      return {
        users: await store.users.search({ order: 'id', limit: 10 }),
        addresses: await store.emailAddresses.listForUser(ada.id),
        sessions: (await store.sessions.listForUser(ada.id)).map((each) => each.idHash),
        token: (await store.apiTokens.findForUser(ada.id))?.createdAt,
        authenticators: (await store.authenticators.listForUser(ada.id)).map((each) => each.id),
        socialAccounts: await store.socialAccounts.listForUser(ada.id),
        socialApps: await store.socialApps.list(),
      };
    }
  });
});
