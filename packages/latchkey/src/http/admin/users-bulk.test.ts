/**
 * The users list's bulk actions, on each database: "Deactivate selected users" and "Delete selected
 * users", each confirmed on a page listing the users first; the flows' rules per user (a superuser
 * only by a superuser, never oneself: skipped and said so, the others done); a recent sign-in
 * before a deletion; and view-only staff, who see no form and get 403.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { User } from '../../account/model.js';
import type { AdminAction } from '../../admin/model.js';
import { issueApiToken } from '../../tokens/api-tokens.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, postSelected, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const USERS = '/admin/users/user/';

describe.each(testDatabaseKinds())('the users list’s bulk actions on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind));
    root = await person('root', { isStaff: true, isSuperuser: true });
  }

  async function signIn(username: string): Promise<void> {
    expect((await signInToAdmin(browser, username)).headers.location).toBe('/admin/');
  }

  /** Staff with exactly these permissions on users. */
  async function staffWith(username: string, actions: AdminAction[]): Promise<User> {
    const member = await person(username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, member, actions.map((action) => ({ model: 'users.user' as const, action })), ADMIN_CLIENT);
    return member;
  }

  /** POSTs the list's action form with several boxes ticked (PageClient.post sends each field once). */
  function postAction(url: string, fields: Record<string, string>, ids: number[], csrf = true) {
    return postSelected(browser, latchkey, url, fields, ids, { csrf });
  }

  const reload = async (user: User) => latchkey.deps.store.users.findById(user.id);

  it('shows the checkboxes and the actions, and asks before doing anything', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    await signIn('root');
    const list = await browser.get(`${USERS}?is_active=1`);
    expect(list.body).toContain(`name="_selected_action" value="${ada.id}"`);
    expect(list.body).toContain('<option value="deactivate">Deactivate selected users</option>');
    expect(list.body).toContain('<option value="delete_selected">Delete selected users</option>');
    expect(list.body).toContain(`action="${USERS}?is_active=1"`);

    // No action, or nothing selected: Django's messages, back to the same list, nothing changed.
    expect((await postAction(`${USERS}?is_active=1`, { action: '' }, [ada.id])).headers.location).toBe(`${USERS}?is_active=1`);
    expect((await browser.get(USERS)).body).toContain('No action selected.');
    expect((await postAction(USERS, { action: 'deactivate' }, [])).headers.location).toBe(USERS);
    expect((await browser.get(USERS)).body).toContain('Items must be selected in order to perform actions on them.');
    expect((await postAction(USERS, { action: 'deactivate' }, [ada.id], false)).statusCode).toBe(403);

    const confirm = await postAction(USERS, { action: 'deactivate' }, [ada.id, bob.id]);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Are you sure you want to apply “Deactivate selected users” to these users?');
    expect(confirm.body).toContain('<td>ada@example.com</td>');
    expect(confirm.body).toContain(`<input type="hidden" name="_selected_action" value="${bob.id}">`);
    expect(confirm.body).toContain('<input type="hidden" name="post" value="yes">');
    expect((await reload(ada))!.isActive).toBe(true);
    expect((await reload(bob))!.isActive).toBe(true);
  });

  it('deactivates the selected users, ending their sessions and tokens, and skips a superuser and oneself', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    const boss = await person('boss', { isStaff: true, isSuperuser: true });
    await issueApiToken(latchkey.deps, ada);
    const adaBrowser = browser.another();
    expect((await adaBrowser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).statusCode).toBe(302);
    const clerk = await staffWith('clerk', ['view', 'change']);
    await signIn('clerk');

    const done = await postAction(USERS, { action: 'deactivate', post: 'yes' }, [ada.id, bob.id, boss.id, clerk.id, 99999]);
    expect(done.headers.location).toBe(USERS);
    expect((await reload(ada))!.isActive).toBe(false);
    expect((await reload(bob))!.isActive).toBe(false);
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
    expect(await latchkey.deps.store.apiTokens.findForUser(ada.id)).toBeUndefined();
    // Refused by the flow, one by one, without stopping the batch.
    expect((await reload(boss))!.isActive).toBe(true);
    expect((await reload(clerk))!.isActive).toBe(true);
    const page = (await browser.get(USERS)).body;
    expect(page).toContain('Deactivated 2 users: bob, ada.');
    expect(page).toContain('Skipped 2 users: “clerk” (You cannot take away your own access to the admin: ask another superuser.); “boss” (Only a superuser may change a superuser.).');
    expect(page).toContain('1 user selected no longer exists.');
    const audit = await latchkey.deps.store.auditLog.listForUser(clerk.id, 50);
    expect(audit.filter((record) => record.event === 'admin_user_changed').map((record) => record.data)).toEqual(
      expect.arrayContaining([expect.objectContaining({ target: ada.id, fields: ['is_active'] }), expect.objectContaining({ target: bob.id, fields: ['is_active'] })]),
    );

    // Once more: nothing left to do for them.
    await postAction(USERS, { action: 'deactivate', post: 'yes' }, [ada.id]);
    expect((await browser.get(USERS)).body).toContain('Already inactive: ada.');
  });

  it('deletes the selected users after a recent sign-in, never a superuser for other staff, nor oneself', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    await signIn('root');
    const confirm = await postAction(USERS, { action: 'delete_selected' }, [ada.id, bob.id, root.id]);
    expect(confirm.body).toContain('Are you sure you want to apply “Delete selected users” to these users?');
    expect(confirm.body).toContain('This cannot be undone.');

    // Ten minutes on, who they are is asked first, and the list comes back after.
    latchkey.clock.advance(10 * 60 * 1000);
    const stale = await postAction(`${USERS}?q=a`, { action: 'delete_selected', post: 'yes' }, [ada.id, bob.id]);
    expect(stale.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(`${USERS}?q=a`)}`);
    expect(await reload(ada)).toBeDefined();
    expect((await browser.post('/accounts/reauthenticate/', { password: ADMIN_PASSWORD })).statusCode).toBe(302);

    const done = await postAction(USERS, { action: 'delete_selected', post: 'yes' }, [ada.id, bob.id, root.id]);
    expect(done.headers.location).toBe(USERS);
    expect(await reload(ada)).toBeUndefined();
    expect(await reload(bob)).toBeUndefined();
    expect(await reload(root)).toBeDefined();
    const page = (await browser.get(USERS)).body;
    expect(page).toContain('Deleted 2 users: bob, ada.');
    expect(page).toContain('Skipped 1 user: “root” (You cannot delete your own account here.).');
  });

  it('lets staff who may delete but not change users delete only, and never a superuser', async () => {
    await setUp();
    const ada = await person('ada');
    const boss = await person('boss', { isStaff: true, isSuperuser: true });
    await staffWith('remover', ['view', 'delete']);
    await signIn('remover');
    const list = (await browser.get(USERS)).body;
    expect(list).toContain('Delete selected users');
    expect(list).not.toContain('Deactivate selected users');
    expect((await postAction(USERS, { action: 'deactivate', post: 'yes' }, [ada.id])).statusCode).toBe(403);
    expect((await reload(ada))!.isActive).toBe(true);

    await postAction(USERS, { action: 'delete_selected', post: 'yes' }, [ada.id, boss.id]);
    expect(await reload(ada)).toBeUndefined();
    expect(await reload(boss)).toBeDefined();
    expect((await browser.get(USERS)).body).toContain('Skipped 1 user: “boss” (Only a superuser may change a superuser.).');
  });

  it('shows view-only staff no checkboxes nor actions, and refuses their POSTs', async () => {
    await setUp();
    const ada = await person('ada');
    await staffWith('viewer', ['view']);
    await signIn('viewer');
    const list = await browser.get(USERS);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('ada');
    expect(list.body).not.toContain('_selected_action');
    expect(list.body).not.toContain('name="action"');
    const attempts: Record<string, string>[] = [{ action: 'deactivate' }, { action: 'deactivate', post: 'yes' }, { action: 'delete_selected', post: 'yes' }, { action: '' }];
    for (const fields of attempts) {
      expect((await postAction(USERS, fields, [ada.id])).statusCode).toBe(403);
    }
    expect((await reload(ada))!.isActive).toBe(true);
  });
});
