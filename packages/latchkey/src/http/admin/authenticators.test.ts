/**
 * The admin's authenticators (allauth.mfa's Authenticator admin), on each database: listed with
 * their users, type and dates, never their secrets; filtered by type and user, searched and paged;
 * removed after a confirmation and a recent sign-in, the recovery codes going with the last app as
 * when the user deactivates it, the user told by email and able to sign in without a code; view-only
 * staff change nothing, unknown ids are 404, and only superusers touch a superuser's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { AdminPermission } from '../../admin/model.js';
import type { User } from '../../account/model.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { newUser } from '../../testing/conformance/harness.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import type { PageClient } from '../../testing/pages.js';

const LIST = '/admin/mfa/authenticator/';

describe.each(testDatabaseKinds())('the authenticators in the admin on %s', (kind) => {
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

  async function staffWith(username: string, permissions: AdminPermission[]): Promise<PageClient> {
    const clerk = await person(username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, permissions, ADMIN_CLIENT);
    const client = browser.another();
    await adminLogin(username, client);
    return client;
  }

  const typesOf = async (user: User) => (await latchkey.deps.store.authenticators.listForUser(user.id)).map((authenticator) => authenticator.type);
  const idOf = async (user: User, type: 'totp' | 'recovery_codes') => (await latchkey.deps.store.authenticators.findForUser(user.id, type))!.id;

  it('lists authenticators with user, type and dates, never their secrets, filtered by type and user', async () => {
    await setUp();
    const ada = await person('ada');
    const bob = await person('bob');
    const adas = await activateTotpFor(latchkey, ada);
    await activateTotpFor(latchkey, bob);
    await adminLogin('root');
    const list = await browser.get(LIST);
    expect(list.statusCode).toBe(200);
    expect(list.headers['cache-control']).toBe('no-store');
    expect(list.body.match(/>Remove<\/a>/g)).toHaveLength(4);
    expect(list.body).toContain('Authenticator app');
    expect(list.body).toContain('Recovery codes');
    expect(list.body).toContain(`href="/admin/users/user/${ada.id}/change/"`);
    expect(list.body).toContain('never');
    expect(list.body).not.toContain(adas.secret);
    for (const code of adas.recoveryCodes) expect(list.body).not.toContain(code);
    const sealed = (await latchkey.deps.store.authenticators.findForUser(ada.id, 'totp'))!.data.secret as string;
    expect(list.body).not.toContain(sealed);

    const apps = await browser.get(`${LIST}?type=totp`);
    expect(apps.body.match(/>Remove<\/a>/g)).toHaveLength(2);
    expect(apps.body).not.toContain('<td>Recovery codes</td>');
    const adaOnly = await browser.get(`${LIST}?user=${ada.id}`);
    expect(adaOnly.body).toContain('Authenticators of ada');
    expect(adaOnly.body.match(/>Remove<\/a>/g)).toHaveLength(2);
    expect(adaOnly.body).not.toContain(`/admin/users/user/${bob.id}/change/`);
    expect((await browser.get(`${LIST}?q=BO`)).body.match(/>Remove<\/a>/g)).toHaveLength(2);
    // A user who does not exist is a 404, not an empty list; an unknown type is no filter.
    expect((await browser.get(`${LIST}?user=99999`)).statusCode).toBe(404);
    expect((await browser.get(`${LIST}?type=sms`)).body.match(/>Remove<\/a>/g)).toHaveLength(4);
  });

  it('pages through authenticators by id, a hundred at a time', async () => {
    await setUp();
    for (let index = 0; index < 101; index += 1) {
      const user = await latchkey.deps.store.users.create(newUser('username', `user${String(index).padStart(3, '0')}`));
      await latchkey.deps.store.authenticators.create({ userId: user.id, type: 'totp', data: {}, createdAt: latchkey.clock.now() });
    }
    await adminLogin('root');
    const first = await browser.get(LIST);
    expect(first.body.match(/>Remove<\/a>/g)).toHaveLength(100);
    expect(first.body).not.toContain('>user000<');
    const next = /href="([^"]+)">Next page/.exec(first.body)?.[1];
    expect(next).toMatch(new RegExp(`^${LIST}\\?after=\\d+$`));
    const second = await browser.get(next!);
    expect(second.body.match(/>Remove<\/a>/g)).toHaveLength(1);
    expect(second.body).toContain('>user000<');
  });

  it('removes an authenticator app and its recovery codes after a confirmation: the user signs in without a code and is told', async () => {
    await setUp();
    const ada = await person('ada');
    await activateTotpFor(latchkey, ada);
    expect((await browser.another().post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).headers.location).toBe('/accounts/2fa/authenticate/');
    await adminLogin('root');
    const totp = await idOf(ada, 'totp');
    const confirm = await browser.get(`${LIST}${totp}/delete/`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Are you sure you want to remove the authenticator app of “ada”?');
    expect(confirm.body).toContain('Their recovery codes go with it');

    expect((await browser.post(`${LIST}${totp}/delete/`, {}, { csrf: false })).statusCode).toBe(403);
    expect(await typesOf(ada)).toEqual(['totp', 'recovery_codes']);
    latchkey.mailer.outbox.length = 0;
    const removed = await browser.post(`${LIST}${totp}/delete/`, {});
    expect(removed.headers.location).toBe(LIST);
    expect((await browser.get(LIST)).body).toContain('Authenticator app and recovery codes of “ada” removed');
    expect(await typesOf(ada)).toEqual([]);

    // Signing in now needs only the password.
    const login = await browser.another().post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD });
    expect(login.statusCode).toBe(302);
    expect(login.headers.location).not.toBe('/accounts/2fa/authenticate/');

    const own = (await latchkey.deps.store.auditLog.listForUser(ada.id, 20)).filter((record) => record.event === 'authenticator_removed').map((record) => record.data);
    expect(own).toEqual(expect.arrayContaining([{ by: 'admin', type: 'totp' }, { by: 'admin', type: 'recovery_codes' }]));
    expect(own).toHaveLength(2);
    const admins = (await latchkey.deps.store.auditLog.listForUser(root.id, 20)).map((record) => record.data);
    expect(admins).toContainEqual({ target: ada.id, change: 'authenticator_removed', type: 'totp', codes_removed: true });
    expect(latchkey.mailer.outbox).toHaveLength(1);
    const [mail] = latchkey.mailer.outbox;
    expect(mail!.to).toEqual(['ada@example.com']);
    expect(mail!.subject).toContain('Two-factor authentication was turned off for your account');
    expect(mail!.text).toContain('A site administrator removed the authenticator app of your account, and its recovery codes with it.');

    // Gone already: 404.
    expect((await browser.post(`${LIST}${totp}/delete/`, {})).statusCode).toBe(404);
  });

  it('removes recovery codes alone, leaving the app', async () => {
    await setUp();
    const ada = await person('ada');
    await activateTotpFor(latchkey, ada);
    await adminLogin('root');
    const codes = await idOf(ada, 'recovery_codes');
    expect((await browser.get(`${LIST}${codes}/delete/`)).body).toContain('Their recovery codes stop working');
    expect((await browser.post(`${LIST}${codes}/delete/`, {})).headers.location).toBe(LIST);
    expect(await typesOf(ada)).toEqual(['totp']);
    expect(latchkey.mailer.outbox.at(-1)!.subject).toContain('The recovery codes of your account were removed');
    expect((await browser.another().post('/accounts/login/', { login: 'ada', password: ADMIN_PASSWORD })).headers.location).toBe('/accounts/2fa/authenticate/');
  });

  it('asks for a recent sign-in before removing one, and comes back to the confirmation', async () => {
    await setUp();
    const ada = await person('ada');
    await activateTotpFor(latchkey, ada);
    await adminLogin('root');
    latchkey.clock.advance(10 * 60 * 1000);
    const path = `${LIST}${await idOf(ada, 'totp')}/delete/`;
    expect((await browser.post(path, {})).headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(path)}`);
    expect(await typesOf(ada)).toEqual(['totp', 'recovery_codes']);
    expect((await browser.post('/accounts/reauthenticate/', { password: ADMIN_PASSWORD, next: path })).headers.location).toBe(path);
    expect((await browser.post(path, {})).headers.location).toBe(LIST);
    expect(await typesOf(ada)).toEqual([]);
  });

  it('shows view-only staff no buttons and refuses their removals; answers 404 for unknown ids; only superusers touch a superuser’s', async () => {
    await setUp();
    const ada = await person('ada');
    await activateTotpFor(latchkey, ada);
    await activateTotpFor(latchkey, root);
    const adas = await idOf(ada, 'totp');

    const viewer = await staffWith('viewer', [{ model: 'mfa.authenticator', action: 'view' }]);
    const list = await viewer.get(LIST);
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain('>Remove</a>');
    expect((await viewer.get(`${LIST}${adas}/delete/`)).statusCode).toBe(403);
    expect((await viewer.post(`${LIST}${adas}/delete/`, {})).statusCode).toBe(403);
    expect(await typesOf(ada)).toEqual(['totp', 'recovery_codes']);

    const remover = await staffWith('remover', [
      { model: 'mfa.authenticator', action: 'view' },
      { model: 'mfa.authenticator', action: 'delete' },
    ]);
    for (const id of ['99999', 'abc', `${adas}.0`]) {
      expect((await remover.get(`${LIST}${id}/delete/`)).statusCode).toBe(404);
      expect((await remover.post(`${LIST}${id}/delete/`, {})).statusCode).toBe(404);
    }
    expect((await remover.post(`${LIST}${await idOf(root, 'totp')}/delete/`, {})).statusCode).toBe(403);
    expect(await typesOf(root)).toEqual(['totp', 'recovery_codes']);
    expect((await remover.post(`${LIST}${adas}/delete/`, {})).headers.location).toBe(LIST);
    expect(await typesOf(ada)).toEqual([]);
  });
});
