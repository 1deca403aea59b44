/**
 * Insecure direct object references in the admin, on each database: staff who may act on one
 * model put another model's object, another user's, a superuser's or a made-up id in the URL.
 * Each detail, change and delete route answers 403 (a right they lack) or 404 (no such object, or
 * an id that is not one), and nothing changes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { AdminPermission } from '../../admin/model.js';
import type { User } from '../../account/model.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import type { PageClient } from '../../testing/pages.js';
import { issueApiToken } from '../../tokens/api-tokens.js';

const ADMIN = '/admin/';

/** A request a staff member's browser sends, and the status it must get. */
type Attempt = [method: 'GET' | 'POST', path: string, status: 403 | 404];

describe.each(testDatabaseKinds())('the admin against guessed and swapped ids on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  /** Ada and a superuser, each with an address, a token, an authenticator app, a session and a social account; a social app. */
  async function setUp() {
    ({ latchkey, browser } = await openAdmin(kind, { plugin: { api: {} } }));
    const root = await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    const ada = await addPerson(latchkey, 'ada');
    const grace = await addPerson(latchkey, 'grace');
    const now = latchkey.clock.now();
    const owned = async (user: User) => {
      await issueApiToken(latchkey.deps, user);
      await activateTotpFor(latchkey, user);
      const session = await latchkey.deps.sessions.create({ userId: user.id });
      const account = await latchkey.deps.store.socialAccounts.create({ userId: user.id, provider: 'corp', uid: `${user.username}-at-corp`, extraData: {}, dateJoined: now, lastLogin: now });
      const [authenticator] = await latchkey.deps.store.authenticators.listForUser(user.id);
      const [address] = await latchkey.deps.store.emailAddresses.listForUser(user.id);
      return { session: session.idHash, account: account.id, authenticator: authenticator!.id, address: address!.id };
    };
    const app = await latchkey.deps.store.socialApps.create({ provider: 'openid_connect', providerId: 'corp', name: 'Corp', clientId: 'c', sealedSecret: '', key: '', settings: { server_url: 'https://id.example.com' } });
    return { root, ada, grace, roots: await owned(root), adas: await owned(ada), app: app.id };
  }

  /** A staff member with these permissions, signed in to the admin in a browser of their own. */
  async function staff(username: string, permissions: AdminPermission[], root: User): Promise<PageClient> {
    const member = await addPerson(latchkey, username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, member, permissions, ADMIN_CLIENT);
    const client = browser.another();
    expect((await signInToAdmin(client, username)).headers.location).toBe(ADMIN);
    return client;
  }

  /** Everything the routes below could change, for before and after. */
  async function snapshot(users: User[]): Promise<string> {
    const store = latchkey.deps.store;
    const each = await Promise.all(
      users.map(async (user) => ({
        user: await store.users.findById(user.id),
        permissions: await store.adminPermissions.listForUser(user.id),
        addresses: await store.emailAddresses.listForUser(user.id),
        sessions: (await store.sessions.listForUser(user.id)).map((session) => session.idHash),
        token: (await store.apiTokens.findForUser(user.id))?.keyHash,
        authenticators: (await store.authenticators.listForUser(user.id)).map((authenticator) => authenticator.id),
        socialAccounts: await store.socialAccounts.listForUser(user.id),
      })),
    );
    return JSON.stringify({ each, apps: await store.socialApps.list() });
  }

  async function expectAnswers(client: PageClient, attempts: Attempt[]): Promise<void> {
    for (const [method, path, status] of attempts) {
      const response = method === 'GET' ? await client.get(path) : await client.post(path, { name: 'Pwned', email: 'evil@example.com', is_active: 'on', is_staff: 'on', is_superuser: 'on', usable: '' });
      expect(response.statusCode, `${method} ${path}`).toBe(status);
    }
  }

  it('refuses staff with rights on one model everything of the others, whatever id they put in the URL', async () => {
    const { root, ada, grace, roots, adas, app } = await setUp();
    // Authenticators only.
    const clerk = await staff('clerk', [{ model: 'mfa.authenticator', action: 'view' }, { model: 'mfa.authenticator', action: 'delete' }], root);
    const before = await snapshot([root, ada, grace]);
    const attempts: Attempt[] = [];
    for (const user of [ada.id, root.id]) {
      for (const page of ['change', 'password', 'delete']) attempts.push(['GET', `${ADMIN}users/user/${user}/${page}/`, 403], ['POST', `${ADMIN}users/user/${user}/${page}/`, 403]);
      attempts.push(['POST', `${ADMIN}users/user/${user}/sessions/end/`, 403]);
      attempts.push(['GET', `${ADMIN}authtoken/tokenproxy/${user}/change/`, 403], ['GET', `${ADMIN}authtoken/tokenproxy/${user}/delete/`, 403], ['POST', `${ADMIN}authtoken/tokenproxy/${user}/delete/`, 403]);
      attempts.push(['POST', `${ADMIN}sessions/session/user/${user}/delete/`, 403]);
    }
    for (const owned of [adas, roots]) {
      // Another model's object, named by the id an authenticator would have.
      for (const id of [owned.account, owned.authenticator]) {
        attempts.push(['GET', `${ADMIN}socialaccount/socialaccount/${id}/change/`, 403], ['POST', `${ADMIN}socialaccount/socialaccount/${id}/delete/`, 403]);
      }
      attempts.push(['POST', `${ADMIN}sessions/session/${owned.session}/delete/`, 403]);
    }
    attempts.push(['GET', `${ADMIN}socialaccount/socialapp/${app}/change/`, 403], ['POST', `${ADMIN}socialaccount/socialapp/${app}/change/`, 403], ['POST', `${ADMIN}socialaccount/socialapp/${app}/delete/`, 403]);
    attempts.push(['POST', `${ADMIN}users/user/add/`, 403], ['POST', `${ADMIN}authtoken/tokenproxy/add/`, 403], ['GET', `${ADMIN}audit/auditrecord/?user=${ada.id}`, 403]);
    await expectAnswers(clerk, attempts);
    // The bulk actions of other lists, with real ids selected.
    expect((await clerk.post(`${ADMIN}account/emailaddress/`, { action: 'mark_verified', _selected_action: String(adas.address), post: 'yes' })).statusCode).toBe(403);
    expect((await clerk.post(`${ADMIN}users/user/`, { action: 'delete_selected', _selected_action: String(ada.id), post: 'yes' })).statusCode).toBe(403);
    // Their own model, with an id of nothing: 404, not another object.
    await expectAnswers(clerk, [
      ['GET', `${ADMIN}mfa/authenticator/999999/delete/`, 404],
      ['POST', `${ADMIN}mfa/authenticator/999999/delete/`, 404],
    ]);
    expect(await snapshot([root, ada, grace])).toBe(before);
  });

  it('refuses staff with every right but a superuser’s anything of a superuser, and answers 404 to ids of nothing', async () => {
    const { root, ada, grace, roots, adas } = await setUp();
    const everything: AdminPermission[] = (['users.user', 'authtoken.tokenproxy', 'mfa.authenticator', 'sessions.session', 'socialaccount.socialaccount', 'account.emailaddress'] as const).flatMap(
      (model) => (['view', 'add', 'change', 'delete'] as const).map((action) => ({ model, action })),
    );
    const clerk = await staff('clerk', everything, root);
    const before = await snapshot([root, ada, grace]);
    await expectAnswers(clerk, [
      ['POST', `${ADMIN}users/user/${root.id}/change/`, 403],
      ['POST', `${ADMIN}users/user/${root.id}/password/`, 403],
      ['POST', `${ADMIN}users/user/${root.id}/delete/`, 403],
      ['POST', `${ADMIN}users/user/${root.id}/sessions/end/`, 403],
      ['POST', `${ADMIN}authtoken/tokenproxy/${root.id}/delete/`, 403],
      ['POST', `${ADMIN}mfa/authenticator/${roots.authenticator}/delete/`, 403],
      ['POST', `${ADMIN}socialaccount/socialaccount/${roots.account}/delete/`, 403],
      ['POST', `${ADMIN}sessions/session/${roots.session}/delete/`, 403],
      ['POST', `${ADMIN}sessions/session/user/${root.id}/delete/`, 403],
      // Making themself superuser, or Ada staff: only a superuser grants power.
      ['POST', `${ADMIN}users/user/${ada.id}/change/`, 403],
      // Ids of nothing, of the wrong shape, or of a user without the object.
      ['GET', `${ADMIN}users/user/999999/change/`, 404],
      ['POST', `${ADMIN}users/user/999999/delete/`, 404],
      ['GET', `${ADMIN}users/user/-1/change/`, 404],
      ['GET', `${ADMIN}users/user/1e3/change/`, 404],
      ['GET', `${ADMIN}users/user/0x1/change/`, 404],
      ['GET', `${ADMIN}users/user/${'9'.repeat(16)}/change/`, 404],
      ['GET', `${ADMIN}users/user/${ada.id}%20OR%201=1/change/`, 404],
      ['POST', `${ADMIN}authtoken/tokenproxy/${grace.id}/delete/`, 404],
      ['GET', `${ADMIN}authtoken/tokenproxy/${grace.id}/change/`, 404],
      ['POST', `${ADMIN}mfa/authenticator/999999/delete/`, 404],
      ['POST', `${ADMIN}socialaccount/socialaccount/999999/delete/`, 404],
      ['POST', `${ADMIN}sessions/session/${'0'.repeat(64)}/delete/`, 404],
      ['POST', `${ADMIN}sessions/session/${adas.session.slice(0, 8)}/delete/`, 404],
      ['POST', `${ADMIN}sessions/session/user/999999/delete/`, 404],
    ]);
    expect(await snapshot([root, ada, grace])).toBe(before);
    // What they may do, they can: the rules above refused the object, not the staff member.
    expect((await clerk.post(`${ADMIN}mfa/authenticator/${adas.authenticator}/delete/`, {})).statusCode).toBe(302);
    expect(await latchkey.deps.store.authenticators.findById(adas.authenticator)).toBeUndefined();
    expect(await latchkey.deps.passwords.verify(ADMIN_PASSWORD, (await latchkey.deps.store.users.findById(root.id))!.password)).toMatchObject({ valid: true });
  });
});
