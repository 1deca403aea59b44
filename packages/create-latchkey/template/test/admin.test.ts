/**
 * The admin area at ADMIN_URL, as cookiecutter-django's users/tests/test_admin.py checks Django's:
 * the user list, its search, adding a user, the change page, and, with ADMIN_FORCE_ALLAUTH, the
 * admin login sent to the account login.
 */
import type { User } from '@latchkey/core';
import { testDatabaseKinds, type TestLatchkey } from '@latchkey/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { Browser, csrfTokenOf } from './browser.js';
import { createProjectLatchkey } from './project.js';

const PASSWORD = 'a long enough passphrase';
const USERS = '/admin/users/user/';

describe.each(testDatabaseKinds())('the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  const addUser = (handle: string, roles: { isStaff?: boolean; isSuperuser?: boolean } = {}): Promise<User> =>
%% if username %%
    latchkey.users.create({ username: handle, email: `${handle}@example.com`, password: PASSWORD, emailVerified: true, ...roles });
%% else %%
    latchkey.users.create({ email: `${handle}@example.com`, password: PASSWORD, emailVerified: true, ...roles });
%% endif %%
%% if username %%
  const loginOf = (handle: string) => handle;
%% else %%
  const loginOf = (handle: string) => `${handle}@example.com`;
%% endif %%

  /** A superuser signed in through the admin's own login page, as in a browser. */
  async function adminBrowser(env: Record<string, string> = {}): Promise<Browser> {
    latchkey = await createProjectLatchkey({ kind, env });
    await addUser('admin', { isStaff: true, isSuperuser: true });
    const app = await buildApp(latchkey);
    await app.ready();
    const browser = new Browser(app);
    if (env.LATCHKEY_ADMIN_FORCE_ALLAUTH === 'true') return browser;
    const form = await browser.get('/admin/login/');
    const signedIn = await browser.post('/admin/login/', [['csrfmiddlewaretoken', csrfTokenOf(form.body)], ['username', loginOf('admin')], ['password', PASSWORD], ['next', '/admin/']]);
    expect(signedIn.headers.location).toBe('/admin/');
    return browser;
  }

  /** The logins in the user list's rows, top to bottom, as the list shows them (each links to the user's page). */
  function rowsOf(html: string): string[] {
    return [...html.matchAll(/<a href="\/admin\/users\/user\/\d+\/change\/">([^<]*)<\/a>/g)].map((match) => match[1]!);
  }

  it('lists the users, newest first', async () => {
    const browser = await adminBrowser();
    await addUser('ada');
    await addUser('grace');
    const list = await browser.get(USERS);
    expect(list.statusCode).toBe(200);
    expect(rowsOf(list.body)).toEqual([loginOf('grace'), loginOf('ada'), loginOf('admin')]);
  });

  it('searches the users', async () => {
    const browser = await adminBrowser();
    await addUser('ada');
    await addUser('grace');
    const found = await browser.get(`${USERS}?q=gr`);
    expect(found.statusCode).toBe(200);
    expect(rowsOf(found.body)).toEqual([loginOf('grace')]);
    const none = await browser.get(`${USERS}?q=nobody`);
    expect(rowsOf(none.body)).toEqual([]);
    expect(none.body).toContain('No user matches.');
  });

  it('adds a user', async () => {
    const browser = await adminBrowser();
    const form = await browser.get(`${USERS}add/`);
    const added = await browser.post(`${USERS}add/`, [
      ['csrfmiddlewaretoken', csrfTokenOf(form.body)],
%% if username %%
      ['username', 'test'],
%% endif %%
      ['email', 'test@example.com'],
      ['password1', 'My_R@ndom-P@ssw0rd'],
      ['password2', 'My_R@ndom-P@ssw0rd'],
    ]);
    expect(added.statusCode).toBe(302);
    expect(await latchkey.users.findByEmail('test@example.com')).toBeDefined();
  });

  it('shows a user’s change page', async () => {
    const browser = await adminBrowser();
    const grace = await addUser('grace');
    const page = await browser.get(`${USERS}${grace.id}/change/`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('grace@example.com');
  });

  it('sends the admin login to the account login with ADMIN_FORCE_ALLAUTH', async () => {
    const browser = await adminBrowser({ LATCHKEY_ADMIN_FORCE_ALLAUTH: 'true' });
    const response = await browser.get('/admin/login/');
    expect(response.statusCode).toBe(302);
    // cookiecutter-django's assertion: LOGIN_URL + "?next=" + the admin login's own path.
    expect(response.headers.location).toBe('/accounts/login/?next=/admin/login/');
  });
});
