/**
 * The admin's stored provider tokens (allauth's SocialTokenAdmin), on each database, read only:
 * each with its account's user and provider, its app, its expiry and whether an access and a
 * refresh token are set; never a token's value nor its ciphertext; filtered by provider and account
 * and paged; staff without the 'view' permission are refused, and nothing here takes a POST.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { AdminPermission } from '../../admin/model.js';
import type { User } from '../../account/model.js';
import { storeProviderTokens } from '../../socialaccount/tokens.js';
import { ADMIN_CLIENT, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { newUser } from '../../testing/conformance/harness.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const LIST = '/admin/socialaccount/socialtoken/';
const ACCESS = 'ya29.access-token-value-0123456789abcdef';
const REFRESH = '1//refresh-token-value-fedcba9876543210';
const PROVIDERS = {
  dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] },
  openid_connect: { APPS: [{ provider_id: 'corp', name: 'Corp', client_id: 'corp-client', settings: { server_url: 'https://id.corp.example' } }] },
};

describe.each(testDatabaseKinds())('the social tokens in the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind, { settings: { SOCIALACCOUNT_PROVIDERS: PROVIDERS, SOCIALACCOUNT_STORE_TOKENS: true } }));
    root = await person('root', { isStaff: true, isSuperuser: true });
  }

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  async function connectWithTokens(user: User, provider: string, uid: string, tokens: { accessToken: string; refreshToken?: string; expiresAt?: Date }, appId?: number) {
    const now = latchkey.clock.now();
    const account = await latchkey.deps.store.socialAccounts.create({ userId: user.id, provider, uid, extraData: {}, dateJoined: now, lastLogin: now });
    await storeProviderTokens(latchkey.deps, latchkey.deps.store, account.id, { databaseId: appId }, tokens);
    return account;
  }

  async function adminLogin(username: string, client = browser): Promise<void> {
    expect((await signInToAdmin(client, username)).headers.location).toBe('/admin/');
  }

  async function staffWith(username: string, permissions: AdminPermission[]): Promise<PageClient> {
    const clerk = await person(username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, permissions, ADMIN_CLIENT);
    const client = browser.another();
    await adminLogin(username, client);
    return client;
  }

  const rows = (body: string) => body.match(/<td>access token: /g)?.length ?? 0;

  it('lists tokens with user, provider, app and expiry, says whether each part is set, and never shows a value', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    const app = await latchkey.deps.store.socialApps.create({ provider: 'openid_connect', providerId: 'okta', name: 'Okta <b>SSO</b>', clientId: 'okta-client', sealedSecret: '', key: '', settings: {} });
    const adas = await connectWithTokens(ada, 'corp', 'C-77', { accessToken: ACCESS, refreshToken: REFRESH, expiresAt: new Date('2031-05-06T07:08:00.000Z') });
    await connectWithTokens(bob, 'dummy', 'bob-1', { accessToken: `${ACCESS}-bob` });
    await connectWithTokens(bob, 'okta', 'bob-okta', { accessToken: `${ACCESS}-okta`, refreshToken: `${REFRESH}-okta` }, app.id);
    const sealed = (await latchkey.deps.store.socialTokens.listForAccount(adas.id))[0]!;
    expect(sealed.sealedToken).not.toBe('');

    await adminLogin('root');
    const list = await browser.get(LIST);
    expect(list.statusCode).toBe(200);
    expect(list.headers['cache-control']).toBe('no-store');
    expect(rows(list.body)).toBe(3);
    expect(list.body).toContain(`href="/admin/users/user/${ada.id}/change/"`);
    expect(list.body).toContain(`href="/admin/socialaccount/socialaccount/${adas.id}/change/">Corp</a>`);
    expect(list.body).toContain(`href="/admin/socialaccount/socialapp/${app.id}/change/">Okta &lt;b&gt;SSO&lt;/b&gt;</a>`);
    expect(list.body).toContain('from the settings');
    expect(list.body).toContain('<time datetime="2031-05-06T07:08:00.000Z">May 6, 2031, 07:08 AM UTC</time>');
    expect(list.body).toContain('never');
    expect(list.body.match(/access token: set/g)).toHaveLength(3);
    expect(list.body.match(/refresh token: set/g)).toHaveLength(2);
    expect(list.body.match(/refresh token: none/g)).toHaveLength(1);
    for (const secret of [ACCESS, REFRESH, ACCESS.slice(0, 12), sealed.sealedToken, sealed.sealedTokenSecret, sealed.sealedToken.slice(0, 40)]) {
      expect(list.body).not.toContain(secret);
    }
    // Nor on the account's page.
    const detail = await browser.get(`/admin/socialaccount/socialaccount/${adas.id}/change/`);
    expect(detail.body).toContain(`href="${LIST}?account=${adas.id}"`);
    for (const secret of [ACCESS, REFRESH, sealed.sealedToken, sealed.sealedTokenSecret]) expect(detail.body).not.toContain(secret);

    expect(list.body).toContain(`href="${LIST}?provider=corp"`);
    expect(rows((await browser.get(`${LIST}?provider=corp`)).body)).toBe(1);
    expect(rows((await browser.get(`${LIST}?provider=dummy`)).body)).toBe(1);
    expect(rows((await browser.get(`${LIST}?provider=nowhere`)).body)).toBe(0);
    const adaOnly = await browser.get(`${LIST}?account=${adas.id}`);
    expect(rows(adaOnly.body)).toBe(1);
    expect(adaOnly.body).toContain('Social application tokens of corp account C-77');
    // An account that does not exist is a 404, not an empty list.
    expect((await browser.get(`${LIST}?account=99999`)).statusCode).toBe(404);
  });

  it('pages through tokens by id, a hundred at a time', async () => {
    await setUp();
    for (let index = 0; index < 101; index += 1) {
      const user = await latchkey.deps.store.users.create(newUser('username', `user${String(index).padStart(3, '0')}`));
      await connectWithTokens(user, 'dummy', `uid-${index}`, { accessToken: `token-${index}` });
    }
    await adminLogin('root');
    const first = await browser.get(LIST);
    expect(rows(first.body)).toBe(100);
    expect(first.body).not.toContain('>user000<');
    const next = /href="([^"]+)">Next page/.exec(first.body)?.[1];
    expect(next).toMatch(new RegExp(`^${LIST}\\?after=\\d+$`));
    const second = await browser.get(next!);
    expect(rows(second.body)).toBe(1);
    expect(second.body).toContain('>user000<');
  });

  it('is read only: view-only staff see the list and no buttons, a POST is refused, staff without the permission get 403', async () => {
    await setUp();
    const ada = await person('ada');
    await connectWithTokens(ada, 'corp', 'C-77', { accessToken: ACCESS, refreshToken: REFRESH });
    const viewer = await staffWith('viewer', [{ model: 'socialaccount.socialtoken', action: 'view' }]);
    const list = await viewer.get(LIST);
    expect(list.statusCode).toBe(200);
    expect(rows(list.body)).toBe(1);
    expect(list.body).not.toMatch(/>(Delete|Change|Add)[^<]*<\/a>/);
    // Without the permission to view users or accounts, no link to them.
    expect(list.body).not.toContain('/admin/users/user/');
    expect(list.body).not.toContain('/admin/socialaccount/socialaccount/');
    // Nothing here takes a POST: no change, delete or add door to reach.
    const token = (await latchkey.deps.store.socialTokens.search({ limit: 1 }))[0]!;
    for (const path of [LIST, `${LIST}add/`, `${LIST}${token.id}/change/`, `${LIST}${token.id}/delete/`]) expect((await viewer.post(path, {})).statusCode).toBe(404);
    expect((await browser.post(`${LIST}${token.id}/delete/`, {})).statusCode).toBe(404);

    const nobody = await staffWith('nobody', [{ model: 'socialaccount.socialaccount', action: 'view' }]);
    expect((await nobody.get(LIST)).statusCode).toBe(403);
    expect((await browser.another().get(LIST)).statusCode).toBe(302);
  });
});
