/**
 * The admin's social accounts (allauth's SocialAccountAdmin), on each database: listed with their
 * users, provider, uid and dates; searched by the start of the uid or the user's login, filtered by
 * provider and paged; an account's page shows the provider's data as escaped JSON; deleted after a
 * confirmation and a recent sign-in, the user told by email and both audit entries written; view-only
 * staff change nothing, a form without CSRF is refused, unknown ids are 404, and only superusers
 * touch a superuser's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { AdminPermission } from '../../admin/model.js';
import type { User } from '../../account/model.js';
import type { SocialAccount } from '../../socialaccount/model.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { newUser } from '../../testing/conformance/harness.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const LIST = '/admin/socialaccount/socialaccount/';
const PROVIDERS = {
  dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] },
  openid_connect: { APPS: [{ provider_id: 'corp', name: 'Corp', client_id: 'corp-client', settings: { server_url: 'https://id.corp.example' } }] },
};

describe.each(testDatabaseKinds())('the social accounts in the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind, { settings: { SOCIALACCOUNT_PROVIDERS: PROVIDERS } }));
    root = await person('root', { isStaff: true, isSuperuser: true });
  }

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  const connect = (user: User, provider: string, uid: string, extraData: Record<string, unknown> = {}) =>
    latchkey.deps.store.socialAccounts.create({ userId: user.id, provider, uid, extraData, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });

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

  const rows = (body: string) => body.match(/>Delete<\/a><\/td>/g)?.length ?? 0;
  const accountsOf = async (user: User) => (await latchkey.deps.store.socialAccounts.listForUser(user.id)).map((account) => account.uid);

  it('lists accounts with user, provider, uid and dates, searched by uid or login and filtered by provider', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    await connect(ada, 'dummy', 'ada-1815');
    await connect(ada, 'corp', 'C-77');
    await connect(bob, 'corp', 'c-78');
    await adminLogin('root');
    const list = await browser.get(LIST);
    expect(list.statusCode).toBe(200);
    expect(list.headers['cache-control']).toBe('no-store');
    expect(rows(list.body)).toBe(3);
    expect(list.body).toContain(`href="/admin/users/user/${ada.id}/change/"`);
    expect(list.body).toContain('>ada-1815</a>');
    expect(list.body).toContain('<td>Dummy</td>');
    expect(list.body).toContain('<td>Corp</td>');
    // The filter offers the offered apps' providers.
    expect(list.body).toContain(`href="${LIST}?provider=dummy"`);
    expect(list.body).toContain(`href="${LIST}?provider=corp"`);

    expect(rows((await browser.get(`${LIST}?provider=corp`)).body)).toBe(2);
    expect(rows((await browser.get(`${LIST}?provider=dummy`)).body)).toBe(1);
    expect(rows((await browser.get(`${LIST}?provider=nowhere`)).body)).toBe(0);
    // The start of a uid, case included, or of a login.
    expect(rows((await browser.get(`${LIST}?q=C-`)).body)).toBe(1);
    expect(rows((await browser.get(`${LIST}?q=ada`)).body)).toBe(2);
    expect(rows((await browser.get(`${LIST}?q=BO`)).body)).toBe(1);
    expect(rows((await browser.get(`${LIST}?q=ada&provider=corp`)).body)).toBe(1);
    expect(rows((await browser.get(`${LIST}?q=%25`)).body)).toBe(0);
  });

  it('pages through accounts by id, a hundred at a time', async () => {
    await setUp();
    for (let index = 0; index < 101; index += 1) {
      const user = await latchkey.deps.store.users.create(newUser('username', `user${String(index).padStart(3, '0')}`));
      await connect(user, 'dummy', `uid-${String(index).padStart(3, '0')}`);
    }
    await adminLogin('root');
    const first = await browser.get(LIST);
    expect(rows(first.body)).toBe(100);
    expect(first.body).not.toContain('>uid-000<');
    const next = /href="([^"]+)">Next page/.exec(first.body)?.[1];
    expect(next).toMatch(new RegExp(`^${LIST}\\?after=\\d+$`));
    const second = await browser.get(next!);
    expect(rows(second.body)).toBe(1);
    expect(second.body).toContain('>uid-000<');
    expect(second.body).toContain(`href="${LIST}">First page`);
  });

  it('shows an account’s data as escaped JSON, read only', async () => {
    await setUp();
    const ada = await person('ada');
    const account = await connect(ada, 'corp', 'C-77', { userinfo: { name: '<script>alert(1)</script>', email: 'ada@corp.example' } });
    await adminLogin('root');
    const page = await browser.get(`${LIST}${account.id}/change/`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.body).toContain('&quot;userinfo&quot;: {');
    expect(page.body).toContain(`href="${LIST}${account.id}/delete/"`);
    expect(page.body).not.toContain(`action="${LIST}${account.id}/change/"`);
    expect(page.body).not.toMatch(/<(input|textarea)[^>]*name="(uid|extra_data|provider)"/);
    expect((await browser.post(`${LIST}${account.id}/change/`, {})).statusCode).toBe(404);
    for (const id of ['99999', 'abc']) expect((await browser.get(`${LIST}${id}/change/`)).statusCode).toBe(404);
  });

  it('deletes an account after a confirmation and a recent sign-in: the user is told and both sides are recorded', async () => {
    await setUp();
    const ada = await person('ada');
    const corp = await connect(ada, 'corp', 'C-77');
    await connect(ada, 'dummy', 'ada-1815');
    await adminLogin('root');
    const path = `${LIST}${corp.id}/delete/`;
    const confirm = await browser.get(path);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Are you sure you want to delete the Corp account “C-77” of “ada”?');
    expect(confirm.body).not.toContain('It is their last way to sign in');

    expect((await browser.post(path, {}, { csrf: false })).statusCode).toBe(403);
    expect(await accountsOf(ada)).toEqual(['C-77', 'ada-1815']);

    latchkey.clock.advance(10 * 60 * 1000);
    expect((await browser.post(path, {})).headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(path)}`);
    expect(await accountsOf(ada)).toEqual(['C-77', 'ada-1815']);
    expect((await browser.post('/accounts/reauthenticate/', { password: ADMIN_PASSWORD, next: path })).headers.location).toBe(path);

    latchkey.mailer.outbox.length = 0;
    expect((await browser.post(path, {})).headers.location).toBe(LIST);
    expect((await browser.get(LIST)).body).toContain('The Corp account of “ada” was removed; they were told by email.');
    expect(await accountsOf(ada)).toEqual(['ada-1815']);
    expect(latchkey.mailer.outbox).toHaveLength(1);
    const [mail] = latchkey.mailer.outbox;
    expect(mail!.to).toEqual(['ada@example.com']);
    expect(mail!.text).toContain('A Corp account was disconnected from your account');

    const own = (await latchkey.deps.store.auditLog.listForUser(ada.id, 20)).filter((record) => record.event === 'social_account_removed').map((record) => record.data);
    expect(own).toEqual([{ provider: 'corp', by: 'admin' }]);
    const admins = (await latchkey.deps.store.auditLog.listForUser(root.id, 20)).filter((record) => record.event === 'admin_user_changed').map((record) => record.data);
    expect(admins).toContainEqual({ target: ada.id, change: 'social_account_removed', provider: 'corp' });

    // Gone already: 404.
    expect((await browser.post(path, {})).statusCode).toBe(404);
  });

  it('says when the account is the user’s last way in, and still deletes it', async () => {
    await setUp();
    const sso = await latchkey.deps.store.users.create(newUser('username', 'sso', { password: '!unusable' }));
    const account: SocialAccount = await connect(sso, 'corp', 'S-1');
    await adminLogin('root');
    expect((await browser.get(`${LIST}${account.id}/delete/`)).body).toContain('It is their last way to sign in');
    expect((await browser.post(`${LIST}${account.id}/delete/`, {})).headers.location).toBe(LIST);
    expect(await accountsOf(sso)).toEqual([]);
  });

  it('shows view-only staff no buttons and refuses their deletions; answers 404 for unknown ids; only superusers touch a superuser’s', async () => {
    await setUp();
    const ada = await person('ada');
    const adas = await connect(ada, 'corp', 'C-77');
    const roots = await connect(root, 'corp', 'R-1');

    const viewer = await staffWith('viewer', [{ model: 'socialaccount.socialaccount', action: 'view' }]);
    const list = await viewer.get(LIST);
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain('>Delete</a>');
    const detail = await viewer.get(`${LIST}${adas.id}/change/`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).not.toContain('>Delete</a>');
    expect((await viewer.get(`${LIST}${adas.id}/delete/`)).statusCode).toBe(403);
    expect((await viewer.post(`${LIST}${adas.id}/delete/`, {})).statusCode).toBe(403);
    expect(await accountsOf(ada)).toEqual(['C-77']);

    const nobody = await staffWith('nobody', []);
    expect((await nobody.get(LIST)).statusCode).toBe(403);

    const remover = await staffWith('remover', [
      { model: 'socialaccount.socialaccount', action: 'view' },
      { model: 'socialaccount.socialaccount', action: 'delete' },
    ]);
    for (const id of ['99999', 'abc', `${adas.id}.0`]) {
      expect((await remover.get(`${LIST}${id}/delete/`)).statusCode).toBe(404);
      expect((await remover.post(`${LIST}${id}/delete/`, {})).statusCode).toBe(404);
    }
    expect((await remover.post(`${LIST}${roots.id}/delete/`, {})).statusCode).toBe(403);
    expect(await accountsOf(root)).toEqual(['R-1']);
    expect((await remover.post(`${LIST}${adas.id}/delete/`, {})).headers.location).toBe(LIST);
    expect(await accountsOf(ada)).toEqual([]);
  });
});
