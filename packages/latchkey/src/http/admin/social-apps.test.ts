/**
 * The admin's social applications pages, on each database: an app added here signs people in at
 * once (a real OpenID provider), its secret is write-only (never in any page, kept when left
 * empty, replaced or cleared only after a recent sign-in), view-only staff change nothing, bad
 * input is refused with the form and nothing written, and deletion asks first. In production an
 * app whose provider is on a loopback or private address is refused unless its host is allowed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setAdminPermissions } from '../../admin/access.js';
import type { AdminPermission } from '../../admin/model.js';
import type { SettingValues } from '../../config/settings.js';
import { decryptSecret } from '../../core/encryption.js';
import type { SocialApp } from '../../socialaccount/model.js';
import { ADMIN_CLIENT, ADMIN_PASSWORD, addPerson, type AdminRoles, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { CORP_LOGIN, sessionUserOf, startCorpProvider, throughCorp } from '../../testing/corp-sso.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, PRODUCTION_TEST_ENV, type TestLatchkey } from '../../testing/latchkey.js';
import type { TestOidcProvider } from '../../testing/oidc-provider.js';
import { PageClient } from '../../testing/pages.js';

/** What the test provider knows Latchkey by (testing/corp-sso.ts). */
const PROVIDER_SECRET = 'provider-secret';
const OTHER_SECRET = 'an0ther-s3cret-value';
const SETTINGS_SECRET = 'settings-app-s3cret-value';
const LIST = '/admin/socialaccount/socialapp/';
const FIVE_MINUTES = 5 * 60 * 1000;

const ACCOUNTS = [{ sub: 'ada-at-corp', claims: { email: 'ada@corp.example', email_verified: true, name: 'Ada Lovelace', preferred_username: 'ada' } }];

let provider: TestOidcProvider;
beforeAll(async () => {
  provider = await startCorpProvider(ACCOUNTS);
});
afterAll(() => provider.close());

describe.each(testDatabaseKinds())('the social applications in the admin on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  /** Every page the admin answered with, to be sure no secret is ever in one. */
  let pages: string[];

  afterEach(async () => {
    for (const body of pages) {
      for (const secret of [PROVIDER_SECRET, OTHER_SECRET, SETTINGS_SECRET]) expect(body).not.toContain(secret);
    }
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind, { settings }));
    // ID tokens are checked on the site's clock: it starts at the provider's time.
    latchkey.clock.set(provider.now());
    pages = [];
  }

  const person = (username: string, roles: AdminRoles = {}) => addPerson(latchkey, username, roles);

  async function adminLogin(username: string, client = browser): Promise<void> {
    const response = await signInToAdmin(client, username);
    expect(response.headers.location).toBe('/admin/');
  }

  async function get(url: string, client = browser) {
    const response = await client.get(url);
    pages.push(response.body);
    return response;
  }

  async function post(url: string, fields: Record<string, string>, client = browser) {
    const response = await client.post(url, fields);
    pages.push(response.body);
    return response;
  }

  /** The form of the Corp SSO app at the test provider, as a person fills it in. */
  const corpForm = (overrides: Record<string, string> = {}) => ({
    provider: 'openid_connect',
    provider_id: 'corp',
    name: 'Corp SSO',
    client_id: 'latchkey',
    secret: PROVIDER_SECRET,
    key: '',
    settings: JSON.stringify({ server_url: provider.issuer }),
    ...overrides,
  });

  const rows = () => latchkey.deps.store.socialApps.list();

  /** The secret a row holds, opened as sign-in opens it (bound to its provider and provider id). */
  function openedSecret(row: SocialApp): string | undefined {
    if (row.sealedSecret === '') return '';
    const opened = decryptSecret(latchkey.settings.SECRET_KEY, 'social-app-secret', row.sealedSecret, `social-app:${row.provider}:${row.providerId}`);
    return opened && Buffer.from(opened).toString('utf8');
  }

  /** A superuser signed in to the admin, who adds the Corp SSO app; the app's row. */
  async function corpAdded(): Promise<SocialApp> {
    await person('root', { isStaff: true, isSuperuser: true });
    await adminLogin('root');
    const added = await post(`${LIST}add/`, corpForm());
    expect(added.statusCode).toBe(302);
    const [row] = await rows();
    return row!;
  }

  async function staffWith(username: string, permissions: AdminPermission[]): Promise<PageClient> {
    const root = (await latchkey.deps.store.users.findByUsername('root')) ?? (await person('root', { isStaff: true, isSuperuser: true }));
    const clerk = await person(username, { isStaff: true });
    await setAdminPermissions(latchkey.deps, root, clerk, permissions, ADMIN_CLIENT);
    const client = browser.another();
    await adminLogin(username, client);
    return client;
  }

  it('adds an app for an OpenID provider, with which a person then signs in at once', async () => {
    await setUp();
    const form = await (async () => {
      await person('root', { isStaff: true, isSuperuser: true });
      await adminLogin('root');
      return get(`${LIST}add/`);
    })();
    expect(form.statusCode).toBe(200);
    expect(form.headers['cache-control']).toBe('no-store');
    expect(form.body).toContain('<option value="openid_connect" selected>OpenID Connect</option>');
    expect(form.body).not.toContain('value="dummy"');
    expect(form.body).toMatch(/name="csrfmiddlewaretoken" value="[^"]+"/);

    const added = await post(`${LIST}add/`, corpForm());
    expect(added.headers.location).toBe(LIST);
    const [row, ...others] = await rows();
    expect(others).toEqual([]);
    expect(row).toMatchObject({ provider: 'openid_connect', providerId: 'corp', name: 'Corp SSO', clientId: 'latchkey', key: '', settings: { server_url: provider.issuer } });
    expect(row!.sealedSecret).not.toContain(PROVIDER_SECRET);
    expect(openedSecret(row!)).toBe(PROVIDER_SECRET);

    const list = await get(LIST);
    expect(list.body).toContain('The social application “Corp SSO” was added.');
    expect(list.body).toContain('<td>Corp SSO</td>');
    expect(list.body).toContain('secret: set');
    expect(list.body).toContain(`href="${LIST}${row!.id}/change/"`);

    const root = (await latchkey.deps.store.users.findByUsername('root'))!;
    const recorded = (await latchkey.deps.store.auditLog.listForUser(root.id, 20)).find((record) => record.event === 'social_app_added');
    expect(recorded?.data).toEqual({ provider: 'openid_connect', provider_id: 'corp' });

    // Another browser, no restart: the login page offers it and the provider signs Ada up.
    const visitor = browser.another();
    expect((await visitor.get('/accounts/login/')).body).toContain(`href="${CORP_LOGIN}"`);
    const { response } = await throughCorp(provider, visitor, 'ada-at-corp');
    expect(response.headers.location).toBe('/');
    const ada = await latchkey.deps.store.users.findByEmail('ada@corp.example');
    expect(await sessionUserOf(latchkey, visitor)).toBe(ada!.id);
  });

  it('never shows a secret: not in the list, the change page, or a refused form, nor the settings’ apps', async () => {
    const providers = { openid_connect: { APPS: [{ provider_id: 'okta', name: 'Okta', client_id: 'okta-client', secret: SETTINGS_SECRET, settings: { server_url: 'https://okta.example' } }] } };
    await setUp({ SOCIALACCOUNT_PROVIDERS: providers });
    const row = await corpAdded();
    const list = await get(LIST);
    expect(list.body).toContain('From the settings (SOCIALACCOUNT_PROVIDERS)');
    expect(list.body).toContain('<td>okta-client</td>');
    expect(list.body).toContain('from the settings');
    // Read-only: the settings' app has no page of its own.
    expect(list.body.match(/\/change\//g)).toHaveLength(1);

    const change = await get(`${LIST}${row.id}/change/`);
    expect(change.statusCode).toBe(200);
    expect(change.body).toContain('Currently: set.');
    expect(change.body).toMatch(/<input id="id_secret" name="secret" type="password" autocomplete="new-password"[^>]*>/);
    expect(change.body).not.toMatch(/name="secret"[^>]* value=/);

    const refused = await post(`${LIST}${row.id}/change/`, corpForm({ secret: OTHER_SECRET, settings: '{"server_url": ' }));
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Enter valid JSON');
    expect(openedSecret((await rows())[0]!)).toBe(PROVIDER_SECRET);
    const refusedAdd = await post(`${LIST}add/`, corpForm({ provider_id: 'corp2', secret: OTHER_SECRET, client_id: '' }));
    expect(refusedAdd.statusCode).toBe(400);
    expect(refusedAdd.body).toContain('A client_id is required.');
    expect(await rows()).toHaveLength(1);
    // The audit trail names what changed, never a value.
    await post(`${LIST}${row.id}/change/`, corpForm({ secret: OTHER_SECRET }));
    const records = await latchkey.deps.store.auditLog.listForUser((await latchkey.deps.store.users.findByUsername('root'))!.id, 20);
    expect(records.find((record) => record.event === 'social_app_changed')?.data).toEqual({ provider: 'openid_connect', provider_id: 'corp', changed: ['secret'] });
    expect(JSON.stringify(records)).not.toContain(OTHER_SECRET);
  });

  it('keeps the secret when left empty, replaces it when typed, clears it when asked, and seals it again when the app moves', async () => {
    await setUp();
    const row = await corpAdded();
    const kept = await post(`${LIST}${row.id}/change/`, corpForm({ secret: '', name: 'Corp' }));
    expect(kept.headers.location).toBe(LIST);
    expect((await get(LIST)).body).toContain('The social application “Corp” was changed (name).');
    const [renamed] = await rows();
    expect(renamed).toMatchObject({ name: 'Corp', sealedSecret: row.sealedSecret });

    // Saved untouched: nothing written.
    await post(`${LIST}${row.id}/change/`, corpForm({ secret: '', name: 'Corp' }));
    expect((await get(LIST)).body).toContain('No fields changed.');

    // A new provider_id: the kept secret is sealed again for it, and still opens.
    await post(`${LIST}${row.id}/change/`, corpForm({ secret: '', name: 'Corp', provider_id: 'corp-2' }));
    const [moved] = await rows();
    expect(moved!.providerId).toBe('corp-2');
    expect(moved!.sealedSecret).not.toBe(row.sealedSecret);
    expect(openedSecret(moved!)).toBe(PROVIDER_SECRET);

    await post(`${LIST}${row.id}/change/`, corpForm({ secret: OTHER_SECRET, provider_id: 'corp-2' }));
    expect(openedSecret((await rows())[0]!)).toBe(OTHER_SECRET);

    const both = await post(`${LIST}${row.id}/change/`, corpForm({ secret: PROVIDER_SECRET, provider_id: 'corp-2', clear_secret: 'on' }));
    expect(both.statusCode).toBe(400);
    expect(both.body).toContain('not both');
    await post(`${LIST}${row.id}/change/`, corpForm({ secret: '', provider_id: 'corp-2', clear_secret: 'on' }));
    expect((await rows())[0]!.sealedSecret).toBe('');
    const page = await get(`${LIST}${row.id}/change/`);
    expect(page.body).toContain('Currently: not set.');
    expect(page.body).not.toContain('name="clear_secret"');
  });

  it('lets staff with the view permission only look: no buttons, 403 on every change, nothing written', async () => {
    await setUp();
    const row = await corpAdded();
    const viewer = await staffWith('viewer', [{ model: 'socialaccount.socialapp', action: 'view' }]);
    const list = await get(LIST, viewer);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('<td>Corp SSO</td>');
    expect(list.body).not.toContain(`${LIST}add/`);
    expect(list.body).not.toContain('>Change<');
    expect(list.body).toContain('>View<');
    const page = await get(`${LIST}${row.id}/change/`, viewer);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('View social application');
    expect(page.body).not.toContain(`action="${LIST}${row.id}/change/"`);
    expect(page.body).not.toContain('Save');
    expect(page.body).not.toContain(`${LIST}${row.id}/delete/`);
    expect(page.body).toContain('<dt>Secret</dt><dd>set</dd>');

    expect((await get(`${LIST}add/`, viewer)).statusCode).toBe(403);
    expect((await get(`${LIST}${row.id}/delete/`, viewer)).statusCode).toBe(403);
    expect((await post(`${LIST}add/`, corpForm({ provider_id: 'other' }), viewer)).statusCode).toBe(403);
    expect((await post(`${LIST}${row.id}/change/`, corpForm({ name: 'Hijacked', secret: '' }), viewer)).statusCode).toBe(403);
    expect((await post(`${LIST}${row.id}/delete/`, {}, viewer)).statusCode).toBe(403);
    expect(await rows()).toEqual([row]);

    // Without even the view permission, and not staff at all: 403 too.
    const stranger = await staffWith('stranger', [{ model: 'users.user', action: 'view' }]);
    expect((await get(LIST, stranger)).statusCode).toBe(403);
    // A change permission alone (which implies view) may change, but not add or delete.
    const editor = await staffWith('editor', [{ model: 'socialaccount.socialapp', action: 'change' }]);
    expect((await get(LIST, editor)).body).not.toContain(`${LIST}add/`);
    expect((await post(`${LIST}${row.id}/change/`, corpForm({ name: 'Corp', secret: '' }), editor)).headers.location).toBe(LIST);
    expect((await post(`${LIST}${row.id}/delete/`, {}, editor)).statusCode).toBe(403);
    expect((await rows())[0]!.name).toBe('Corp');
  });

  it('refuses bad input with the form and its field errors, writing nothing', async () => {
    await setUp();
    const row = await corpAdded();
    const cases: Array<[Record<string, string>, string]> = [
      [{ settings: '{"server_url": ' }, 'Enter valid JSON'],
      [{ settings: '["openid"]' }, 'The settings must be a JSON object'],
      [{ settings: '{}' }, 'A server_url is required for openid_connect'],
      [{ settings: '{"server_url": "http://id.corp.example"}' }, 'is not an https URL'],
      [{ provider: 'dummy' }, 'Unknown provider &quot;dummy&quot;'],
      [{ provider_id: '../x' }, 'Letters, digits'],
      [{ provider_id: '' }, 'A provider_id is required for openid_connect'],
      [{ client_id: '' }, 'A client_id is required.'],
      [{ name: 'x'.repeat(41) }, 'id="name-errors"'],
    ];
    for (const [changes, message] of cases) {
      const added = await post(`${LIST}add/`, corpForm({ provider_id: 'new', ...changes }));
      expect(added.statusCode, JSON.stringify(changes)).toBe(400);
      expect(added.body, JSON.stringify(changes)).toContain(message);
      const changed = await post(`${LIST}${row.id}/change/`, corpForm({ secret: '', ...changes }));
      expect(changed.statusCode, JSON.stringify(changes)).toBe(400);
      expect(changed.body, JSON.stringify(changes)).toContain(message);
    }
    // The form comes back with what was typed (the secret aside).
    const again = await post(`${LIST}add/`, corpForm({ provider_id: 'new', name: 'New <b>SSO</b>', client_id: '' }));
    expect(again.body).toContain('value="New &lt;b&gt;SSO&lt;/b&gt;"');
    expect(again.body).toContain('aria-invalid="true" aria-describedby="client_id-errors"');

    // Another app's provider_id.
    const second = await post(`${LIST}add/`, corpForm({ provider_id: 'corp-2' }));
    expect(second.statusCode).toBe(302);
    const duplicate = await post(`${LIST}add/`, corpForm());
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.body).toContain(`A social app for openid_connect &quot;corp&quot; already exists (id ${row.id}).`);
    const taken = await post(`${LIST}${row.id}/change/`, corpForm({ provider_id: 'corp-2', secret: '' }));
    expect(taken.statusCode).toBe(400);
    expect(taken.body).toContain('A social app for openid_connect &quot;corp-2&quot; already exists');
    expect((await rows()).map((app) => [app.providerId, app.name])).toEqual([['corp', 'Corp SSO'], ['corp-2', 'Corp SSO']]);
    expect(openedSecret((await rows())[0]!)).toBe(PROVIDER_SECRET);

    // Every form carries the CSRF check.
    expect((await browser.post(`${LIST}add/`, corpForm({ provider_id: 'forged' }), { csrf: false })).statusCode).toBe(403);
    expect((await browser.post(`${LIST}${row.id}/delete/`, {}, { csrf: false })).statusCode).toBe(403);
    expect(await rows()).toHaveLength(2);
  });

  it('answers 404 for an unknown app', async () => {
    await setUp();
    const row = await corpAdded();
    for (const id of [String(row.id + 1000), 'corp', '1e3', '-1']) {
      expect((await get(`${LIST}${id}/change/`)).statusCode).toBe(404);
      expect((await get(`${LIST}${id}/delete/`)).statusCode).toBe(404);
      expect((await post(`${LIST}${id}/change/`, corpForm({ secret: '' }))).statusCode).toBe(404);
      expect((await post(`${LIST}${id}/delete/`, {})).statusCode).toBe(404);
    }
    expect(await rows()).toEqual([row]);
  });

  it('deletes an app after a confirmation naming it and the accounts that sign in through it', async () => {
    await setUp();
    const row = await corpAdded();
    const { response } = await throughCorp(provider, browser.another(), 'ada-at-corp');
    expect(response.headers.location).toBe('/');
    const confirmation = await get(`${LIST}${row.id}/delete/`);
    expect(confirmation.statusCode).toBe(200);
    expect(confirmation.body).toContain('“Corp SSO”');
    expect(confirmation.body).toContain('1 social account signs in through “corp”');
    expect(confirmation.body).toContain(`action="${LIST}${row.id}/delete/"`);
    expect(await rows()).toHaveLength(1);

    const deleted = await post(`${LIST}${row.id}/delete/`, {});
    expect(deleted.headers.location).toBe(LIST);
    expect(await rows()).toEqual([]);
    const list = await get(LIST);
    expect(list.body).toContain('The social application “Corp SSO” was deleted.');
    expect(list.body).toContain('No social application in the database.');
    // The account stays with its user; the sign-in is gone with the app.
    expect(await latchkey.deps.store.socialAccounts.countForProvider('corp')).toBe(1);
    expect((await browser.another().get(CORP_LOGIN)).statusCode).toBe(404);
    const root = (await latchkey.deps.store.users.findByUsername('root'))!;
    const recorded = (await latchkey.deps.store.auditLog.listForUser(root.id, 20)).find((record) => record.event === 'social_app_removed');
    expect(recorded?.data).toEqual({ provider: 'openid_connect', provider_id: 'corp' });
  });

  it('asks for a recent sign-in before the secret is set, replaced or cleared, and comes back to the form', async () => {
    await setUp();
    const row = await corpAdded();
    latchkey.clock.advance(FIVE_MINUTES + 1000);
    const change = `${LIST}${row.id}/change/`;
    expect((await get(change)).body).toContain(`href="/accounts/reauthenticate/?next=${encodeURIComponent(change)}"`);

    const stale = await post(change, corpForm({ secret: OTHER_SECRET }));
    expect(stale.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(change)}`);
    const cleared = await post(change, corpForm({ secret: '', clear_secret: 'on' }));
    expect(cleared.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(change)}`);
    const added = await post(`${LIST}add/`, corpForm({ provider_id: 'corp-2' }));
    expect(added.headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(`${LIST}add/`)}`);
    expect(await rows()).toEqual([row]);

    // Other changes, and a public client without a secret, need none.
    expect((await post(change, corpForm({ secret: '', name: 'Corp' }))).headers.location).toBe(LIST);
    expect((await post(`${LIST}add/`, corpForm({ provider_id: 'public', secret: '' }))).headers.location).toBe(LIST);

    const confirmed = await browser.post('/accounts/reauthenticate/', { password: ADMIN_PASSWORD, next: change });
    expect(confirmed.headers.location).toBe(change);
    expect((await get(change)).body).not.toContain('/accounts/reauthenticate/');
    expect((await post(change, corpForm({ secret: OTHER_SECRET, name: 'Corp' }))).headers.location).toBe(LIST);
    expect(openedSecret((await rows()).find((app) => app.id === row.id)!)).toBe(OTHER_SECRET);
  });
});


describe.each(testDatabaseKinds())('the social applications in the admin under production settings on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  /** A superuser signed in to the admin of a production site; `allowlist` is SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST. */
  async function signedInAdmin(allowlist = ''): Promise<void> {
    latchkey = await createTestLatchkey({ kind, env: { ...PRODUCTION_TEST_ENV, LATCHKEY_SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: allowlist } });
    browser = await PageClient.create(latchkey);
    await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    expect((await signInToAdmin(browser, 'root')).headers.location).toBe('/admin/');
  }

  const form = (providerId: string, settings: Record<string, string>) => ({
    provider: 'openid_connect',
    provider_id: providerId,
    name: 'Corp SSO',
    client_id: 'latchkey',
    secret: PROVIDER_SECRET,
    key: '',
    settings: JSON.stringify(settings),
  });
  const refusal = (setting: string, url: string, host: string) =>
    `${setting} &quot;${url}&quot; is on a loopback or private address, which production refuses unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists ${host}`;

  it('refuses an app whose provider is on a loopback or private address, on add and on change, writing nothing', async () => {
    await signedInAdmin();
    const stored = await latchkey.deps.store.socialApps.create({
      provider: 'openid_connect', providerId: 'stored', name: 'Stored', clientId: 'c', sealedSecret: '', key: '', settings: { server_url: 'https://id.corp.example' },
    });
    const cases: Array<[Record<string, string>, string]> = [
      [{ server_url: 'http://127.0.0.1:6379' }, refusal('server_url', 'http://127.0.0.1:6379/', '127.0.0.1')],
      [{ server_url: 'https://169.254.169.254/latest' }, refusal('server_url', 'https://169.254.169.254/latest', '169.254.169.254')],
      [{ server_url: 'https://[::ffff:10.0.0.5]' }, refusal('server_url', 'https://[::ffff:a00:5]/', '[::ffff:a00:5]')],
      [{ server_url: 'https://id.corp.example', access_token_url: 'https://192.168.0.9:5432/token' }, refusal('access_token_url', 'https://192.168.0.9:5432/token', '192.168.0.9')],
    ];
    for (const [settings, message] of cases) {
      const added = await browser.post(`${LIST}add/`, form('corp', settings));
      expect(added.statusCode, JSON.stringify(settings)).toBe(400);
      expect(added.body, JSON.stringify(settings)).toContain(message);
      const changed = await browser.post(`${LIST}${stored.id}/change/`, { ...form('stored', settings), secret: '' });
      expect(changed.statusCode, JSON.stringify(settings)).toBe(400);
      expect(changed.body, JSON.stringify(settings)).toContain(message);
    }
    expect(await latchkey.deps.store.socialApps.list()).toEqual([stored]);
  });

  it('takes an app on a host SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists, and no other', async () => {
    await signedInAdmin('keycloak.internal');
    expect((await browser.post(`${LIST}add/`, form('corp', { server_url: 'https://keycloak.internal/realms/corp' }))).headers.location).toBe(LIST);
    const other = await browser.post(`${LIST}add/`, form('other', { server_url: 'https://10.0.0.5/realms/corp' }));
    expect(other.statusCode).toBe(400);
    expect(other.body).toContain(refusal('server_url', 'https://10.0.0.5/realms/corp', '10.0.0.5'));
    expect((await latchkey.deps.store.socialApps.list()).map((app) => app.providerId)).toEqual(['corp']);
  });
});
