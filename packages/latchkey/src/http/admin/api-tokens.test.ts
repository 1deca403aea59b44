/**
 * The admin's API tokens (Django REST framework's TokenProxy), on each database: a token added for
 * a user typed by username or address shows its key once and never again (not in any list or
 * page, and a second token is refused, not handed the first key); adding needs a recent sign-in;
 * deleting asks first and the key stops working; view-only staff change nothing, URLs naming a
 * user without a token are 404, and only superusers touch a superuser's token.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import { NO_SUCH_USER, SEVERAL_USERS, TOKEN_EXISTS } from '../../admin/flows/manage-api-tokens.js';
import type { AdminPermission } from '../../admin/model.js';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { issueApiToken, userForApiToken } from '../../tokens/api-tokens.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { newUser } from '../../testing/conformance/harness.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const LIST = '/admin/authtoken/tokenproxy/';
const KEY = /<input id="id_key" type="text" value="([0-9a-f]{40})"/;

describe.each(testDatabaseKinds())('the API tokens in the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  /** Every page the admin answered with, to be sure no key is in one but the page that adds it. */
  let pages: string[];
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(usernameType: 'username' | 'email' = 'username'): Promise<void> {
    // The project serves the API layer (use_drf=y): its tokens have admin pages.
    ({ latchkey, browser } = await openAdmin(kind, { usernameType, plugin: { api: {} } }));
    root = await person('root', { isStaff: true, isSuperuser: true });
    pages = [];
  }

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  async function adminLogin(username: string, client = browser): Promise<void> {
    const login = latchkey.settings.USERNAME_TYPE === 'username' ? username : `${username}@example.com`;
    expect((await signInToAdmin(client, login)).headers.location).toBe('/admin/');
  }

  async function get(url: string, client = browser) {
    const response = await client.get(url);
    pages.push(response.body);
    return response;
  }

  async function post(url: string, fields: Record<string, string>, client = browser, options: { csrf?: boolean } = {}) {
    const response = await client.post(url, fields, options);
    pages.push(response.body);
    return response;
  }

  async function staffWith(username: string, permissions: AdminPermission[]): Promise<PageClient> {
    const clerk = await person(username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, permissions, ADMIN_CLIENT);
    const client = browser.another();
    await adminLogin(username, client);
    return client;
  }

  it('adds a token for a user typed by username or address, showing its key once and never again', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    await adminLogin('root');

    const form = await get(`${LIST}add/?user=${ada.id}`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('value="ada"');
    const added = await browser.post(`${LIST}add/`, { user: 'ADA' });
    expect(added.statusCode).toBe(200);
    expect(added.headers['cache-control']).toBe('no-store');
    const key = KEY.exec(added.body)?.[1];
    expect(key).toBeDefined();
    expect((await userForApiToken(latchkey.deps, key!))?.id).toBe(ada.id);
    // By address too.
    const byAddress = await browser.post(`${LIST}add/`, { user: 'Bob@Example.com' });
    const bobsKey = KEY.exec(byAddress.body)?.[1];
    expect((await userForApiToken(latchkey.deps, bobsKey!))?.id).toBe(bob.id);

    // A second token is refused, saying why, and the key is not handed out again.
    const again = await post(`${LIST}add/`, { user: 'ada' });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain(TOKEN_EXISTS.id);
    expect(again.body).not.toMatch(KEY);
    const nobody = await post(`${LIST}add/`, { user: 'nobody' });
    expect(nobody.statusCode).toBe(400);
    expect(nobody.body).toContain(NO_SUCH_USER.id);
    // Where usernames are the login, an address several accounts share names none of them.
    for (const username of ['carol', 'carla']) await createUser(latchkey.deps, { username, email: 'shared@example.com', password: ADMIN_PASSWORD, emailVerified: false });
    const shared = await post(`${LIST}add/`, { user: 'shared@example.com' });
    expect(shared.statusCode).toBe(400);
    expect(shared.body).toContain(SEVERAL_USERS.id);

    // The list and the token's own page show whose it is and since when; no key, anywhere.
    const list = await get(LIST);
    expect(list.body).toContain(`href="${LIST}${ada.id}/change/"`);
    expect(list.body).toContain(`href="${LIST}${bob.id}/change/"`);
    expect(list.body).toContain('Add token');
    const change = await get(`${LIST}${ada.id}/change/`);
    expect(change.body).toContain('hidden: it was shown once');
    expect(change.body).toContain(`${LIST}${ada.id}/delete/`);
    await get(`${LIST}?q=ad`);
    await get(`${LIST}${ada.id}/delete/`);
    for (const body of pages) {
      expect(body).not.toContain(key);
      expect(body).not.toContain(bobsKey);
    }
    const stored = (await latchkey.deps.store.apiTokens.findForUser(ada.id))!;
    for (const body of pages) expect(body).not.toContain(stored.keyHash);

    const trail = (await latchkey.deps.store.auditLog.listForUser(root.id, 20)).filter((record) => record.event === 'admin_user_changed').map((record) => record.data);
    expect(trail).toEqual(expect.arrayContaining([{ target: ada.id, change: 'api_token_created' }]));
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id, 20)).map((record) => record.event)).toContain('api_token_created');
  });

  it('in a project that signs in by email, finds the user by address and lists tokens by it', async () => {
    await setUp('email');
    const ada = await person('ada');
    await adminLogin('root');
    expect((await get(`${LIST}add/?user=${ada.id}`)).body).toContain('value="ada@example.com"');
    const added = await post(`${LIST}add/`, { user: ' ADA@example.com ' });
    expect(added.statusCode).toBe(200);
    expect((await userForApiToken(latchkey.deps, KEY.exec(added.body)![1]!))?.id).toBe(ada.id);
    expect((await post(`${LIST}add/`, { user: 'ada' })).body).toContain(NO_SUCH_USER.id);
    const list = await get(`${LIST}?q=ad`);
    expect(list.body).toContain(`>ada@example.com</a>`);
  });

  it('searches the tokens by the start of a login and pages through them by user', async () => {
    await setUp();
    const users: User[] = [];
    for (let index = 0; index < 101; index += 1) {
      const user = await latchkey.deps.store.users.create(newUser('username', `user${String(index).padStart(3, '0')}`));
      await issueApiToken(latchkey.deps, user);
      users.push(user);
    }
    await adminLogin('root');
    const first = await get(LIST);
    expect(first.body.match(/\/change\/"/g)).toHaveLength(100);
    expect(first.body).toContain('>user100<');
    expect(first.body).not.toContain('>user000<');
    const next = /href="([^"]+)">Next page/.exec(first.body)?.[1];
    expect(next).toBe(`${LIST}?after=${users[1]!.id}`);
    const second = await get(next!);
    expect(second.body.match(/\/change\/"/g)).toHaveLength(1);
    expect(second.body).toContain('>user000<');
    const searched = await get(`${LIST}?q=USER05`);
    expect(searched.body.match(/\/change\/"/g)).toHaveLength(10);
    expect((await get(`${LIST}?q=%25`)).body).toContain('No token matches.');
  });

  it('asks for a recent sign-in before adding a token', async () => {
    await setUp();
    const ada = await person('ada');
    await adminLogin('root');
    latchkey.clock.advance(10 * 60 * 1000);
    expect((await get(`${LIST}add/`)).headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(`${LIST}add/`)}`);
    expect((await post(`${LIST}add/`, { user: 'ada' })).headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(`${LIST}add/`)}`);
    expect(await latchkey.deps.store.apiTokens.findForUser(ada.id)).toBeUndefined();
    expect((await browser.post('/accounts/reauthenticate/', { password: ADMIN_PASSWORD, next: `${LIST}add/` })).headers.location).toBe(`${LIST}add/`);
    expect((await post(`${LIST}add/`, { user: 'ada' })).statusCode).toBe(200);
    expect(await latchkey.deps.store.apiTokens.findForUser(ada.id)).toBeDefined();
  });

  it('deletes a token after a confirmation, with the CSRF token; its key stops working', async () => {
    await setUp();
    const ada = await person('ada');
    const key = await issueApiToken(latchkey.deps, ada);
    await adminLogin('root');
    const confirm = await get(`${LIST}${ada.id}/delete/`);
    expect(confirm.body).toContain('Are you sure you want to delete the token of “ada”?');
    expect((await post(`${LIST}${ada.id}/delete/`, {}, browser, { csrf: false })).statusCode).toBe(403);
    expect(await userForApiToken(latchkey.deps, key)).toBeDefined();
    const deleted = await post(`${LIST}${ada.id}/delete/`, {});
    expect(deleted.headers.location).toBe(LIST);
    expect((await get(LIST)).body).toContain('The token of “ada” was deleted.');
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
    const trail = (await latchkey.deps.store.auditLog.listForUser(root.id, 20)).map((record) => record.data);
    expect(trail).toContainEqual({ target: ada.id, change: 'api_token_deleted' });
    for (const body of pages) expect(body).not.toContain(key);
  });

  it('answers 404 for a user without a token or no user at all, never another’s token', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    await issueApiToken(latchkey.deps, ada);
    await adminLogin('root');
    for (const id of [String(bob.id), '99999', 'abc', `${ada.id}x`]) {
      expect((await get(`${LIST}${id}/change/`)).statusCode).toBe(404);
      expect((await get(`${LIST}${id}/delete/`)).statusCode).toBe(404);
      expect((await post(`${LIST}${id}/delete/`, {})).statusCode).toBe(404);
    }
    expect(await latchkey.deps.store.apiTokens.findForUser(ada.id)).toBeDefined();
  });

  it('shows view-only staff no buttons and refuses their changes; only superusers touch a superuser’s token', async () => {
    await setUp();
    const ada = await person('ada');
    const key = await issueApiToken(latchkey.deps, ada);
    await issueApiToken(latchkey.deps, root);
    const viewer = await staffWith('viewer', [{ model: 'authtoken.tokenproxy', action: 'view' }]);
    const list = await get(LIST, viewer);
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain('Add token');
    expect((await get(`${LIST}${ada.id}/change/`, viewer)).body).not.toContain('>Delete</a>');
    expect((await get(`${LIST}add/`, viewer)).statusCode).toBe(403);
    expect((await post(`${LIST}add/`, { user: 'viewer' }, viewer)).statusCode).toBe(403);
    expect((await get(`${LIST}${ada.id}/delete/`, viewer)).statusCode).toBe(403);
    expect((await post(`${LIST}${ada.id}/delete/`, {}, viewer)).statusCode).toBe(403);
    expect(await userForApiToken(latchkey.deps, key)).toBeDefined();
    expect(await latchkey.deps.store.apiTokens.findForUser((await latchkey.deps.store.users.findByUsername('viewer'))!.id)).toBeUndefined();

    const clerk = await staffWith('clerk', [
      { model: 'authtoken.tokenproxy', action: 'add' },
      { model: 'authtoken.tokenproxy', action: 'delete' },
    ]);
    expect((await post(`${LIST}${root.id}/delete/`, {}, clerk)).statusCode).toBe(403);
    expect(await latchkey.deps.store.apiTokens.findForUser(root.id)).toBeDefined();
    await latchkey.deps.store.apiTokens.deleteForUser(root.id);
    const refused = await post(`${LIST}add/`, { user: 'root' }, clerk);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).not.toMatch(KEY);
    expect(await latchkey.deps.store.apiTokens.findForUser(root.id)).toBeUndefined();
    expect((await post(`${LIST}${ada.id}/delete/`, {}, clerk)).headers.location).toBe(LIST);
  });
});
