/**
 * The admin's email addresses (allauth's EmailAddressAdmin) as a browser meets them, on each
 * database: the list (search, filters, paging, escaping), and the bulk action "Mark selected email
 * addresses as verified" with its confirmation page, refused to view-only staff and without CSRF.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, openAdmin, postSelected, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const LIST = '/admin/account/emailaddress/';

describe.each(testDatabaseKinds())('the admin’s email addresses on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind));
  }

  const person = (username: string, options: { email?: string; emailVerified?: boolean; isStaff?: boolean; isSuperuser?: boolean } = {}) =>
    addPerson(latchkey, username, {}, { emailVerified: false, ...options });

  const adminLogin = (username: string, client = browser) => signInToAdmin(client, username);

  /** POSTs the list's action form with several boxes ticked (PageClient.post sends each field once). */
  function postAction(url: string, fields: Record<string, string>, ids: number[], client = browser, csrf = true) {
    return postSelected(client, latchkey, url, fields, ids, { csrf });
  }

  it('lists addresses newest first with their users, searches by the start of an address or a username, filters, pages by id, and escapes', async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true, emailVerified: true });
    for (let index = 0; index < 105; index++) await person(`user${String(index).padStart(3, '0')}`, { email: `u${index}@example.org` });
    await person('odd', { email: "o'b&c@example.net" });
    await adminLogin('root');

    const first = await browser.get(LIST);
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    expect(first.body).toContain('<td>o&#39;b&amp;c@example.net</td>');
    expect(first.body).not.toContain("o'b&c@example.net");
    expect(first.body).toContain('href="/admin/users/user/');
    const next = /href="(\/admin\/account\/emailaddress\/\?after=\d+)"/.exec(first.body)?.[1];
    expect(next).toBeDefined();
    // 107 addresses: 100 on the first page, the oldest 7 on the second, and no further page.
    const second = await browser.get(next!);
    expect(second.body).toContain('<td>root@example.com</td>');
    expect(second.body).toContain('<td>u0@example.org</td>');
    expect(second.body).not.toContain('Next page');
    expect(second.body).toContain('First page');

    const searched = await browser.get(`${LIST}?q=U10`);
    expect(searched.body.match(/<td>u10\d?@example.org<\/td>/g)).toHaveLength(6);
    expect((await browser.get(`${LIST}?q=user104`)).body).toContain('<td>u104@example.org</td>');
    expect((await browser.get(`${LIST}?q=u_`)).body).toContain('No email address matches.');
    const verified = await browser.get(`${LIST}?verified=1`);
    expect(verified.body).toContain('<td>root@example.com</td>');
    expect(verified.body).not.toContain('<td>u0@example.org</td>');
    expect(verified.body).toContain('<a href="/admin/account/emailaddress/?verified=1" aria-current="true">Yes</a>');
    expect(verified.body).toContain('<a href="/admin/account/emailaddress/?verified=0">No</a>');
    expect((await browser.get(`${LIST}?primary=0`)).body).toContain('No email address matches.');
  });

  it('marks the selected addresses verified after a confirmation page, through the flow, and keeps the list’s filters', async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true, emailVerified: true });
    const ada = await person('ada');
    const bob = await person('bob', { emailVerified: true });
    await person('eve', { email: 'shared@example.com', emailVerified: true });
    const { store } = latchkey.deps;
    const [adas] = await store.emailAddresses.listForUser(ada.id);
    const [bobs] = await store.emailAddresses.listForUser(bob.id);
    const adasShared = await store.emailAddresses.add({ userId: ada.id, email: 'shared@example.com', verified: false, primary: false });
    await adminLogin('root');

    const list = await browser.get(`${LIST}?verified=0`);
    expect(list.body).toContain('<option value="mark_verified">Mark selected email addresses as verified</option>');
    expect(list.body).toContain(`name="_selected_action" value="${adas!.id}"`);
    expect(list.body).toContain('action="/admin/account/emailaddress/?verified=0"');

    // No action, or nothing selected: Django's messages, and nothing changes.
    expect((await postAction(`${LIST}?verified=0`, { action: '' }, [adas!.id])).headers.location).toBe(`${LIST}?verified=0`);
    expect((await browser.get(LIST)).body).toContain('No action selected.');
    expect((await postAction(LIST, { action: 'mark_verified' }, [])).headers.location).toBe(LIST);
    expect((await browser.get(LIST)).body).toContain('Items must be selected in order to perform actions on them.');

    const confirm = await postAction(`${LIST}?verified=0`, { action: 'mark_verified' }, [adas!.id, bobs!.id, adasShared.id]);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Are you sure you want to apply “Mark selected email addresses as verified”');
    for (const email of ['ada@example.com', 'bob@example.com', 'shared@example.com']) expect(confirm.body).toContain(`<td>${email}</td>`);
    expect(confirm.body).toContain('name="post" value="yes"');
    // Nothing changed yet.
    expect((await store.emailAddresses.findById(adas!.id))?.verified).toBe(false);

    const done = await postAction(`${LIST}?verified=0`, { action: 'mark_verified', post: 'yes' }, [adas!.id, bobs!.id, adasShared.id]);
    expect(done.statusCode).toBe(302);
    expect(done.headers.location).toBe(`${LIST}?verified=0`);
    expect((await store.emailAddresses.findById(adas!.id))?.verified).toBe(true);
    expect((await store.emailAddresses.findById(adasShared.id))?.verified).toBe(false);
    const after = await browser.get(`${LIST}?verified=0`);
    expect(after.body).toContain('Marked 1 email address as verified.');
    expect(after.body).toContain('Not marked verified, because another user has verified the same address: shared@example.com.');
    expect(after.body).toContain('Already verified: bob@example.com.');
    const confirmed = (await store.auditLog.listForUser(ada.id)).filter((record) => record.event === 'email_confirmed');
    expect(confirmed.map((record) => record.data)).toEqual([{ email: 'ada@example.com', by: 'admin', staff: (await store.users.findByUsername('root'))!.id }]);
  });

  it('shows view-only staff the list without the action form, answers their POST 403, and refuses a POST without the CSRF token', async () => {
    await setUp();
    const root = await person('root', { isStaff: true, isSuperuser: true, emailVerified: true });
    const clerk = await person('clerk', { isStaff: true, emailVerified: true });
    const ada = await person('ada');
    const [adas] = await latchkey.deps.store.emailAddresses.listForUser(ada.id);
    const other = browser.another();
    await adminLogin('clerk', other);
    expect((await other.get(LIST)).statusCode).toBe(403);
    await setAdminPermissions(latchkey.deps, root, clerk, [{ model: 'account.emailaddress', action: 'view' }], ADMIN_CLIENT);
    const list = await other.get(LIST);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('<td>ada@example.com</td>');
    expect(list.body).not.toContain('_selected_action');
    expect(list.body).not.toContain('Mark selected email addresses as verified');
    // Not allowed to view users: the user is shown, not linked.
    expect(list.body).not.toContain('href="/admin/users/user/');
    for (const post of ['', 'yes']) {
      const refused = await postAction(LIST, { action: 'mark_verified', post }, [adas!.id], other);
      expect(refused.statusCode).toBe(403);
    }
    expect((await latchkey.deps.store.emailAddresses.findById(adas!.id))?.verified).toBe(false);

    await adminLogin('root');
    await browser.get(LIST);
    expect((await postAction(LIST, { action: 'mark_verified', post: 'yes' }, [adas!.id], browser, false)).statusCode).toBe(403);
    expect((await latchkey.deps.store.emailAddresses.findById(adas!.id))?.verified).toBe(false);
  });

  it('sends a visitor to the admin login, and answers 403 to a signed-in user who is not staff', async () => {
    await setUp();
    await person('ada', { emailVerified: true });
    expect((await browser.get(LIST)).headers.location).toBe(`/admin/login/?next=${encodeURIComponent(LIST)}`);
    expect((await browser.post(LIST, { action: 'mark_verified', post: 'yes' })).headers.location).toBe(`/admin/login/?next=${encodeURIComponent(LIST)}`);
    expect((await browser.post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).statusCode).toBe(302);
    expect((await browser.get(LIST)).statusCode).toBe(403);
  });
});
