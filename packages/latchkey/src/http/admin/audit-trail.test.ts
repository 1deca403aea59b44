/**
 * The admin's audit trail as a browser meets it, on each database: read-only, newest first, its
 * filters by event and by user, paging by id, and every value escaped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import { ADMIN_CLIENT, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const LIST = '/admin/audit/auditrecord/';

describe.each(testDatabaseKinds())('the admin’s audit trail on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind));
  }

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  const adminLogin = (username: string, client = browser) => signInToAdmin(client, username);

  it('lists the trail newest first with its time, event, user, address, browser and data, all escaped', async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true });
    const ada = await person('ada');
    await latchkey.deps.events.emit('email_added', ada.id, { ip: '198.51.100.9', userAgent: '<script>alert(1)</script>' }, { email: 'ada@example.com', note: '<b>bold</b>' });
    await latchkey.deps.events.emit('authentication_failed', null, ADMIN_CLIENT, {});
    await adminLogin('root');

    const page = await browser.get(LIST);
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).not.toContain('<b>bold</b>');
    expect(page.body).toContain('<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>');
    expect(page.body).toContain('<code>{&quot;email&quot;:&quot;ada@example.com&quot;,&quot;note&quot;:&quot;&lt;b&gt;bold&lt;/b&gt;&quot;}</code>');
    expect(page.body).toContain('<td>198.51.100.9</td>');
    expect(page.body).toContain(`<time datetime="${latchkey.deps.clock.now().toISOString()}">`);
    expect(page.body).toContain(`<a href="${LIST}?user=${ada.id}">ada</a>`);
    // Newest first: the admin login, then the failure (no user), then Ada's address.
    const events = [...page.body.matchAll(/<\/time><\/td>\s*<td>([a-z_]+)<\/td>/g)].map((match) => match[1]);
    expect(events.slice(0, 3)).toEqual(['user_logged_in', 'authentication_failed', 'email_added']);
    // Read-only: no form posts anywhere but the logout and the language switch.
    expect(page.body.match(/method="post"/g)).toHaveLength(2);
    expect(page.body).toContain('action="/i18n/setlang/"');
  });

  it('filters by event and by user, keeping the other filter, and pages by id', async () => {
    await setUp();
    await person('root', { isStaff: true, isSuperuser: true });
    const ada = await person('ada');
    const bob = await person('bob');
    for (let index = 0; index < 105; index++) await latchkey.deps.events.emit('user_logged_in', ada.id, ADMIN_CLIENT, { method: 'password', index });
    await latchkey.deps.events.emit('password_changed', ada.id, ADMIN_CLIENT, {});
    await latchkey.deps.events.emit('password_changed', bob.id, ADMIN_CLIENT, {});
    await latchkey.deps.store.users.delete(bob.id);
    await adminLogin('root');

    const adas = await browser.get(`${LIST}?user=${ada.id}`);
    expect(adas.body).toContain(`Showing user #${ada.id} (ada): their own records and the admin changes made to them.`);
    expect(adas.body).not.toContain('index&quot;:0}');
    expect(adas.body).toContain(`<a href="${LIST}?event=password_changed&amp;user=${ada.id}">password_changed</a>`);
    const next = /href="(\/admin\/audit\/auditrecord\/\?user=\d+&amp;after=\d+)"/.exec(adas.body)?.[1];
    expect(next).toBeDefined();
    const second = await browser.get(next!.replaceAll('&amp;', '&'));
    // 106 of Ada's records: 100 on the first page, the oldest 6 on the second, and no further page.
    expect(second.body.match(/<td>user_logged_in<\/td>/g)).toHaveLength(6);
    expect(second.body).toContain('index&quot;:0}');
    expect(second.body).not.toContain('Next page');

    const changed = await browser.get(`${LIST}?event=password_changed`);
    expect(changed.body.match(/<td>password_changed<\/td>/g)).toHaveLength(2);
    expect(changed.body).not.toContain('<td>user_logged_in</td>');
    // A deleted user's records stay, linked by id.
    expect(changed.body).toContain(`<a href="${LIST}?event=password_changed&amp;user=${bob.id}">#${bob.id} (deleted)</a>`);
    const both = await browser.get(`${LIST}?event=password_changed&user=${ada.id}`);
    expect(both.body.match(/<td>password_changed<\/td>/g)).toHaveLength(1);
    expect(both.body).toContain(`<a href="${LIST}?event=password_changed">All users</a>`);
    expect(both.body).toContain(`<a href="${LIST}?user=${ada.id}">All</a>`);
    expect((await browser.get(`${LIST}?user=${bob.id}`)).body).toContain(`Showing user #${bob.id} (no such user now):`);
    // Unknown filters are no filters.
    expect((await browser.get(`${LIST}?event=%3Cscript%3E&user=x`)).body).toContain('<td>password_changed</td>');
  });

  it('filtered by a user, shows the admin changes made to them beside their own records, naming both sides', async () => {
    await setUp();
    const root = await person('root', { isStaff: true, isSuperuser: true });
    const ada = await person('ada');
    const bob = await person('bob');
    await latchkey.deps.events.emit('user_logged_in', ada.id, ADMIN_CLIENT, { method: 'password' });
    await adminLogin('root');
    // Made through the admin's pages, so recorded by its flows: against root, about Ada.
    expect((await browser.post(`/admin/users/user/${ada.id}/change/`, { name: 'Ada Lovelace', email: ada.email, is_active: 'on' })).statusCode).toBe(302);
    expect((await browser.post(`/admin/users/user/${bob.id}/sessions/end/`, {})).statusCode).toBe(302);

    const adas = await browser.get(`${LIST}?user=${ada.id}`);
    const rows = [...adas.body.matchAll(/<td>([a-z_]+)<\/td>\s*<td>(.*?)<\/td>\s*<td>(.*?)<\/td>/g)].map(([, event, by, to]) => ({ event, by, to }));
    expect(rows).toEqual([
      { event: 'admin_user_changed', by: `<a href="${LIST}?user=${root.id}">root</a>`, to: `<a href="${LIST}?user=${ada.id}">ada</a>` },
      { event: 'user_logged_in', by: `<a href="${LIST}?user=${ada.id}">ada</a>`, to: '' },
    ]);
    // Root's own filter has both changes and root's sign-in; Bob's has only the change made to him.
    expect((await browser.get(`${LIST}?user=${root.id}`)).body.match(/<td>admin_user_changed<\/td>/g)).toHaveLength(2);
    const bobs = await browser.get(`${LIST}?user=${bob.id}&event=admin_user_changed`);
    expect(bobs.body.match(/<td>admin_user_changed<\/td>/g)).toHaveLength(1);
    expect(bobs.body).toContain('sessions_ended');
    // A changed user deleted since is still named by id.
    await latchkey.deps.store.users.delete(bob.id);
    expect((await browser.get(`${LIST}?user=${bob.id}`)).body).toContain(`<a href="${LIST}?user=${bob.id}">#${bob.id} (deleted)</a>`);
  });

  it('is for staff who may view it only', async () => {
    await setUp();
    const root = await person('root', { isStaff: true, isSuperuser: true });
    const clerk = await person('clerk', { isStaff: true });
    expect((await browser.get(LIST)).headers.location).toBe(`/admin/login/?next=${encodeURIComponent(LIST)}`);
    await adminLogin('clerk');
    expect((await browser.get(LIST)).statusCode).toBe(403);
    await setAdminPermissions(latchkey.deps, root, clerk, [{ model: 'audit.auditrecord', action: 'view' }], ADMIN_CLIENT);
    expect((await browser.get(LIST)).statusCode).toBe(200);
    // There is nothing to post to.
    expect((await browser.post(LIST, {})).statusCode).toBe(404);
  });
});
