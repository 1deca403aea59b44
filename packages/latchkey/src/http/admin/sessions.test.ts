/**
 * The admin's sessions list, on each database: live signed-in sessions, most recently seen first,
 * shown by a short label and never by their ids; filtered by user and paged by keyset; ending one
 * or all of a user's, only with the 'delete' permission, with the CSRF token, and never a
 * superuser's by staff who are not superusers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { AdminPermission } from '../../admin/model.js';
import type { User } from '../../account/model.js';
import { sha256Hex } from '../../core/crypto.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const LIST = '/admin/sessions/session/';

describe.each(testDatabaseKinds())('the sessions in the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let root: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind));
    root = await person('root', { isStaff: true, isSuperuser: true });
  }

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  async function adminLogin(username: string, client = browser): Promise<void> {
    expect((await signInToAdmin(client, username)).headers.location).toBe('/admin/');
  }

  /** A browser of its own in which the user signs in to the site; its session's id (the cookie). */
  async function signedInElsewhere(username: string, userAgent = 'Firefox/140.0'): Promise<{ client: PageClient; id: string }> {
    const client = browser.another();
    const response = await client.post('/accounts/login/', { login: username, password: ADMIN_PASSWORD }, { headers: { 'user-agent': userAgent } });
    expect(response.statusCode).toBe(302);
    return { client, id: client.cookies.get('sessionid')! };
  }

  async function staffWith(username: string, permissions: AdminPermission[]): Promise<PageClient> {
    const clerk = await person(username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, permissions, ADMIN_CLIENT);
    const client = browser.another();
    await adminLogin(username, client);
    return client;
  }

  const live = async (user: User) => (await latchkey.deps.sessions.listForUser(user.id)).length;

  it('lists live signed-in sessions, most recently seen first, with user, IP, browser and times, never their ids', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    const adas = await signedInElsewhere('ada', '<script>alert(1)</script>');
    latchkey.clock.advance(2 * 60 * 1000);
    const bobs = await signedInElsewhere('bob', 'Safari/18');
    // A visitor who is not signed in has a session too (a CSRF token, say): it is nobody's to list.
    const visitor = browser.another();
    await visitor.get('/accounts/login/');
    latchkey.clock.advance(2 * 60 * 1000);
    await adminLogin('root');

    const page = await browser.get(LIST);
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    const body = page.body;
    // Newest activity first: root's own (marked), then bob's, then ada's.
    const rootAt = body.indexOf('(this session)');
    const bobAt = body.indexOf('Safari/18');
    const adaAt = body.indexOf('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(rootAt).toBeGreaterThan(0);
    expect(bobAt).toBeGreaterThan(rootAt);
    expect(adaAt).toBeGreaterThan(bobAt);
    expect(body).not.toContain('<script>alert(1)</script>');
    expect(body).toContain('127.0.0.1');
    expect(body).toContain(`href="/admin/users/user/${ada.id}/change/"`);
    expect(body).toContain(`href="${LIST}?user=${bob.id}"`);
    // A short label of the stored hash; the ids themselves appear nowhere.
    expect(body).toContain(`<code>${sha256Hex(adas.id).slice(0, 8)}</code>`);
    for (const id of [adas.id, bobs.id, browser.cookies.get('sessionid')!, visitor.cookies.get('sessionid')!]) expect(body).not.toContain(id);
    expect(body.match(/<code>/g)).toHaveLength(3);

    // One user's, from the user's page; a user who does not exist is a 404, not an empty list.
    const adaOnly = await browser.get(`${LIST}?user=${ada.id}`);
    expect(adaOnly.body).toContain('Sessions of ada');
    expect(adaOnly.body.match(/<code>/g)).toHaveLength(1);
    expect(adaOnly.body).not.toContain('Safari/18');
    expect((await browser.get(`${LIST}?user=99999`)).statusCode).toBe(404);
    expect((await browser.get(`${LIST}?user=abc`)).statusCode).toBe(404);

    // Sessions past the idle timeout are over, even before clearsessions removes them.
    latchkey.clock.advance(latchkey.settings.SESSION_IDLE_TIMEOUT * 1000);
    const fresh = browser.another();
    await adminLogin('root', fresh);
    const later = await fresh.get(LIST);
    expect(later.body.match(/<code>/g)).toHaveLength(1);
    expect(later.body).toContain('(this session)');
  });

  it('pages through sessions by keyset, a hundred at a time, without skipping or repeating one', async () => {
    await setUp();
    const ada = await person('ada');
    // 101 sessions of ada's, two of them seen at the same instant.
    for (let index = 0; index < 101; index += 1) {
      await latchkey.deps.sessions.create({ userId: ada.id, ipAddress: `198.51.100.${index}`, userAgent: `agent-${index}` });
      if (index !== 50) latchkey.clock.advance(1000);
    }
    await adminLogin('root');
    const first = await browser.get(`${LIST}?user=${ada.id}`);
    expect(first.body.match(/<code>/g)).toHaveLength(100);
    expect(first.body).not.toContain('First page');
    const next = /href="([^"]+)">Next page/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toMatch(new RegExp(`^${LIST}\\?user=${ada.id}&after=\\d+\\.[0-9a-f]{64}$`));
    const second = await browser.get(next!);
    expect(second.body.match(/<code>/g)).toHaveLength(1);
    expect(second.body).toContain('>agent-0<');
    expect(second.body).toContain('First page');
    expect(second.body).not.toContain('Next page');
    const shown = new Set([...`${first.body}${second.body}`.matchAll(/>agent-(\d+)</g)].map((match) => match[1]));
    expect(shown.size).toBe(101);
  });

  it('ends one session and all of a user’s, signing those browsers out, in the audit trail', async () => {
    await setUp();
    const ada = await person('ada');
    const adas = await signedInElsewhere('ada');
    const again = await signedInElsewhere('ada');
    await adminLogin('root');
    // Without the form's CSRF token nothing ends.
    expect((await browser.post(`${LIST}${sha256Hex(adas.id)}/delete/`, {}, { csrf: false })).statusCode).toBe(403);
    expect((await browser.post(`${LIST}user/${ada.id}/delete/`, {}, { csrf: false })).statusCode).toBe(403);
    expect(await live(ada)).toBe(2);

    const ended = await browser.post(`${LIST}${sha256Hex(adas.id)}/delete/`, { user: String(ada.id) });
    expect(ended.headers.location).toBe(`${LIST}?user=${ada.id}`);
    expect((await browser.get(ended.headers.location as string)).body).toContain('A session of “ada” was ended.');
    expect((await adas.client.get('/accounts/email/')).headers.location).toMatch(/^\/accounts\/login\//);
    expect((await again.client.get('/accounts/email/')).statusCode).toBe(200);
    // Ended already, or never a session: 404.
    expect((await browser.post(`${LIST}${sha256Hex(adas.id)}/delete/`, {})).statusCode).toBe(404);
    expect((await browser.post(`${LIST}${'0'.repeat(64)}/delete/`, {})).statusCode).toBe(404);
    expect((await browser.post(`${LIST}not-a-hash/delete/`, {})).statusCode).toBe(404);

    const all = await browser.post(`${LIST}user/${ada.id}/delete/`, {});
    expect(all.headers.location).toBe(`${LIST}?user=${ada.id}`);
    expect((await browser.get(all.headers.location as string)).body).toContain('1 session of “ada” ended.');
    expect(await live(ada)).toBe(0);
    expect((await browser.post(`${LIST}user/99999/delete/`, {})).statusCode).toBe(404);

    const trail = (await latchkey.deps.store.auditLog.listForUser(root.id, 20)).filter((record) => record.event === 'admin_user_changed').map((record) => record.data);
    expect(trail).toEqual(
      expect.arrayContaining([
        { target: ada.id, change: 'session_ended' },
        { target: ada.id, change: 'sessions_ended', count: 1 },
      ]),
    );
  });

  it('shows view-only staff no buttons and refuses their POSTs; staff who are not superusers never end a superuser’s session', async () => {
    await setUp();
    const ada = await person('ada');
    const adas = await signedInElsewhere('ada');
    await adminLogin('root');
    const rootSession = sha256Hex(browser.cookies.get('sessionid')!);

    const viewer = await staffWith('viewer', [{ model: 'sessions.session', action: 'view' }]);
    const page = await viewer.get(LIST);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('<form method="post" action="/admin/sessions/');
    expect(page.body).not.toContain('>End</button>');
    expect((await viewer.get(`${LIST}?user=${ada.id}`)).body).not.toContain('End all');
    expect((await viewer.post(`${LIST}${sha256Hex(adas.id)}/delete/`, {})).statusCode).toBe(403);
    expect((await viewer.post(`${LIST}user/${ada.id}/delete/`, {})).statusCode).toBe(403);
    expect(await live(ada)).toBe(1);

    const nobody = await staffWith('nobody', [{ model: 'users.user', action: 'view' }]);
    expect((await nobody.get(LIST)).statusCode).toBe(403);

    const ender = await staffWith('ender', [{ model: 'sessions.session', action: 'delete' }]);
    expect((await ender.get(LIST)).statusCode).toBe(403);
    expect((await ender.post(`${LIST}${rootSession}/delete/`, {})).statusCode).toBe(403);
    expect((await ender.post(`${LIST}user/${root.id}/delete/`, {})).statusCode).toBe(403);
    expect((await browser.get(LIST)).statusCode).toBe(200);
    expect((await ender.post(`${LIST}${sha256Hex(adas.id)}/delete/`, {})).headers.location).toBe(LIST);
    expect(await live(ada)).toBe(0);
  });

  it('sends a staff member who ends their own session to the admin login', async () => {
    await setUp();
    await adminLogin('root');
    const own = sha256Hex(browser.cookies.get('sessionid')!);
    expect((await browser.post(`${LIST}${own}/delete/`, {})).headers.location).toBe('/admin/login/');
    expect((await browser.get(LIST)).headers.location).toBe(`/admin/login/?next=${encodeURIComponent(LIST)}`);
  });
});
