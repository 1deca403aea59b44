/**
 * The apple batch through the pages, on both databases, against an Apple-shaped fixture
 * (testing/providers/apple-fixture.ts) that verifies our ES256 client secret with the .p8 key's
 * public half and signs ID tokens with a real RS256 JWKS: Apple's form_post answer arrives as a
 * cross-site POST without the session cookie, is parked, and is finished by the same-site GET.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../../../testing/database.js';
import { HeadlessTestClient } from '../../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../../testing/latchkey.js';
import { PageClient } from '../../../testing/pages.js';
import { generateAppleClientKey, startAppleFixture, type AppleFixture } from '../../../testing/providers/apple-fixture.js';
import { addSocialApp, MANAGEMENT_COMMAND } from '../../flows/manage-apps.js';
import { appleProviderKind } from './apple.js';

const NOW = new Date('2030-03-01T12:00:00Z');
const WEB_CLIENT = 'com.example.web';
const IOS_CLIENT = 'com.example.ios';
const TEAM_ID = 'TEAM123456';
const KEY_ID = 'KEY1234567';
const LOGIN = '/accounts/apple/login/';
const FINISH = '/accounts/apple/login/callback/finish/';
const clientKey = generateAppleClientKey();

const ACCOUNTS = [
  { sub: '001234.ada', email: 'ada@example.com', emailVerified: 'true' as const, firstName: 'Ada', lastName: 'Lovelace' },
  { sub: '001234.relay', email: 'x7kq2@privaterelay.appleid.com', emailVerified: 'true' as const, isPrivateEmail: true, firstName: 'Hidden', lastName: 'Person' },
  { sub: '001234.unverified', email: 'grace@example.com', emailVerified: 'false' as const, firstName: 'Grace', lastName: 'Hopper' },
];

let fixture: AppleFixture;
beforeAll(async () => {
  fixture = await startAppleFixture({ clientIds: [WEB_CLIENT, IOS_CLIENT], teamId: TEAM_ID, keyId: KEY_ID, clientKey: clientKey.publicKey, accounts: ACCOUNTS, now: () => NOW });
});
afterAll(() => fixture.close());

describe('the apple provider kind', () => {
  it('wants the .p8 key and Key ID unless the app is hidden, and never repeats the key in a message', () => {
    expect(appleProviderKind.checkSettings({})).toMatchObject({ key: 'certificate_key', reason: 'required' });
    expect(appleProviderKind.checkSettings({ hidden: true })).toBeUndefined();
    const problem = appleProviderKind.checkSettings({ certificate_key: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----' });
    expect(problem).toMatchObject({ key: 'certificate_key', reason: 'invalid' });
    expect(problem!.message).not.toContain('not a key');
    expect(appleProviderKind.checkApp!({ settings: { certificate_key: clientKey.pem }, secret: '', key: '' })).toMatchObject({ key: 'secret', reason: 'required' });
  });

  it('keeps the .p8 key out of the database: a stored app with it is refused, a hidden token-only one is taken', async () => {
    const latchkey = await createTestLatchkey({ kind: 'sqlite' });
    try {
      const apple = { provider: 'apple', providerId: '', name: 'Apple', clientId: 'com.example.web', key: 'TEAM123456' };
      const refused = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...apple, settings: { certificate_key: clientKey.pem }, secret: 'KEY1234567' }, { ip: '127.0.0.1', userAgent: 'test' }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'invalid_input', param: 'settings' });
      expect(JSON.stringify(await latchkey.deps.store.socialApps.list())).not.toContain('PRIVATE KEY');
      const hidden = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...apple, clientId: 'com.example.ios', settings: { hidden: true }, secret: '' }, { ip: '127.0.0.1', userAgent: 'test' });
      expect(hidden.clientId).toBe('com.example.ios');
    } finally {
      await latchkey.destroy();
    }
  });
});

describe.each(testDatabaseKinds())('signing in with Apple on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    fixture.reset();
    await browser.close();
    await latchkey.destroy();
  });

  /** `oneApp`: a single app whose client_id lists the Services ID, then the bundle id (allauth's comma-separated form). */
  async function setUp(certificateKey = clientKey.pem, oneApp = false): Promise<void> {
    const endpoints = { authorize_url: fixture.authorizeUrl, access_token_url: fixture.accessTokenUrl, keys_url: fixture.keysUrl };
    const web = { client_id: WEB_CLIENT, secret: KEY_ID, key: TEAM_ID, settings: { ...endpoints, certificate_key: certificateKey } };
    const apps = oneApp
      ? [{ ...web, client_id: `${WEB_CLIENT},${IOS_CLIENT}` }]
      : [
          web,
          // The iOS app's bundle id, for token login only (allauth's advice: a hidden app).
          { client_id: IOS_CLIENT, settings: { keys_url: fixture.keysUrl, hidden: true } },
        ];
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: { apple: { APPS: apps } } } });
    latchkey.clock.set(NOW);
    browser = await PageClient.create(latchkey, { plugin: { headless: true } });
  }

  /** The button, Apple's page as `sub` (or a refusal), its cross-site auto-post (no cookies), and the same-site finish. */
  async function signIn(how: { as: string } | { deny: true }): Promise<{ posted: LightMyRequestResponse; response: LightMyRequestResponse }> {
    const started = await browser.post(LOGIN, {});
    expect(started.statusCode).toBe(302);
    const authorizeUrl = new URL(started.headers.location!);
    expect(Object.fromEntries(authorizeUrl.searchParams)).toMatchObject({ client_id: WEB_CLIENT, response_type: 'code', response_mode: 'form_post', scope: 'name email' });
    const form = await fixture.authorize(authorizeUrl, how);
    expect(form.action.href).toBe('http://testserver/accounts/apple/login/callback/');
    // SameSite=Lax: the browser sends no cookie of ours with a POST from Apple's site.
    const posted = await browser.app.inject({
      method: 'POST',
      url: form.action.pathname,
      headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded', origin: 'https://appleid.apple.com' },
      payload: new URLSearchParams(form.fields).toString(),
    });
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toBe(FINISH);
    const parked = posted.cookies.find((cookie) => cookie.name === 'provider_form_post')!;
    expect(parked).toMatchObject({ path: FINISH, httpOnly: true, sameSite: 'Lax' });
    browser.cookies.set(parked.name, parked.value);
    return { posted, response: await browser.get(FINISH) };
  }

  const sessionUser = async () => (await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId;

  it('signs a new person up with the name Apple sends once and the verified address, signing its client secret as Apple checks it', async () => {
    await setUp();
    const { response } = await signIn({ as: '001234.ada' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/');
    const user = await latchkey.deps.store.users.findByEmail('ada@example.com');
    expect(user).toMatchObject({ name: 'Ada Lovelace' });
    expect(await sessionUser()).toBe(user!.id);
    expect(await latchkey.deps.store.emailAddresses.listForUser(user!.id)).toMatchObject([{ email: 'ada@example.com', verified: true, primary: true }]);
    const [account] = await latchkey.deps.store.socialAccounts.listForUser(user!.id);
    expect(account).toMatchObject({ provider: 'apple', uid: '001234.ada', extraData: { id_token: { sub: '001234.ada', email_verified: 'true', aud: WEB_CLIENT } } });
    // Only claims: no access, refresh or ID token is kept in extra_data.
    expect(JSON.stringify(account!.extraData)).not.toMatch(/"(at|rt)-[0-9a-f]+"|eyJ/);
    const secret = fixture.acceptedSecrets.at(-1)!;
    expect(secret).toMatchObject({ kid: KEY_ID, iss: TEAM_ID, sub: WEB_CLIENT, aud: 'https://appleid.apple.com', iat: NOW.getTime() / 1000 });
    expect(secret.exp! - secret.iat!).toBe(3600);
  });

  it('signs a returning person (no user field now) in to the same account, keeping the name', async () => {
    await setUp();
    await signIn({ as: '001234.ada' });
    const first = await latchkey.deps.store.users.findByEmail('ada@example.com');
    // A fresh browser: Apple sends no `user` field this time.
    browser = browser.another();
    const { response } = await signIn({ as: '001234.ada' });
    expect(response.headers.location).toBe('/');
    expect(await sessionUser()).toBe(first!.id);
    expect(await latchkey.deps.store.users.findByEmail('ada@example.com')).toMatchObject({ id: first!.id, name: 'Ada Lovelace' });
  });

  it('keeps a private-relay address, and sends an address Apple does not vouch for ("false") to confirmation', async () => {
    await setUp();
    await signIn({ as: '001234.relay' });
    const relay = await latchkey.deps.store.users.findByEmail('x7kq2@privaterelay.appleid.com');
    expect(await latchkey.deps.store.emailAddresses.listForUser(relay!.id)).toMatchObject([{ email: 'x7kq2@privaterelay.appleid.com', verified: true }]);
    const [account] = await latchkey.deps.store.socialAccounts.listForUser(relay!.id);
    expect(account!.extraData).toMatchObject({ id_token: { is_private_email: 'true' } });

    browser = browser.another();
    const { response } = await signIn({ as: '001234.unverified' });
    // Under mandatory verification the sign-in stops at the confirm-email stage, nobody signed in.
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('Verify your email address');
    expect(await sessionUser()).toBeFalsy();
    const grace = await latchkey.deps.store.users.findByEmail('grace@example.com');
    expect(await latchkey.deps.store.emailAddresses.listForUser(grace!.id)).toMatchObject([{ email: 'grace@example.com', verified: false }]);
  });

  it('takes a person who cancels at Apple to the cancelled page', async () => {
    await setUp();
    const { response } = await signIn({ deny: true });
    expect(response.headers.location).toBe('/accounts/3rdparty/login/cancelled/');
  });

  it.each([
    ['a client secret signed with another .p8 key (Apple answers invalid_client)', 'bad-secret'],
    ['an ID token signed by a key Apple does not publish', 'other-key'],
    ['an ID token dated a day in the future', 'dated-tomorrow'],
  ] as const)('refuses %s: the error page, nobody signed in', async (_case, trouble) => {
    await setUp(trouble === 'bad-secret' ? generateAppleClientKey().pem : clientKey.pem);
    if (trouble !== 'bad-secret') fixture.misbehave.idTokens = trouble;
    const { response } = await signIn({ as: '001234.ada' });
    expect(response.headers.location).toBe('/accounts/3rdparty/login/error/');
    // The refusal is the one meant: the fixture took the secret only when it was signed with the registered key.
    expect(fixture.acceptedSecrets).toHaveLength(trouble === 'bad-secret' ? 0 : 1);
    expect(await sessionUser()).toBeFalsy();
    expect(await latchkey.deps.store.users.findByEmail('ada@example.com')).toBeUndefined();
  });

  it('finishes a parked answer once, and only in the browser it was parked for', async () => {
    await setUp();
    const started = await browser.post(LOGIN, {});
    const form = await fixture.authorize(new URL(started.headers.location!), { as: '001234.ada' });
    const post = () => browser.app.inject({ method: 'POST', url: form.action.pathname, headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form.fields).toString() });
    // Another browser that holds the parked cookie but not the session that started the sign-in.
    const stranger = browser.another();
    const parked = (await post()).cookies.find((cookie) => cookie.name === 'provider_form_post')!;
    stranger.cookies.set(parked.name, parked.value);
    expect((await stranger.get(FINISH)).headers.location).toBe('/accounts/3rdparty/login/error/');
    // Without a parked answer (used, or never parked), the finish is refused too.
    expect((await browser.get(FINISH)).headers.location).toBe('/accounts/3rdparty/login/error/');
    expect(await latchkey.deps.store.users.findByEmail('ada@example.com')).toBeUndefined();
  });

  it('signs an iOS app in with a token login, verifying the ID token against Apple’s keys; refuses one signed by another key or dated in the future', async () => {
    await setUp();
    const api = new HeadlessTestClient(browser.app, 'app', latchkey);
    const token = async () => ({ provider: 'apple', process: 'login', token: { client_id: IOS_CLIENT, id_token: await fixture.idTokenFor('001234.ada', IOS_CLIENT) } });
    for (const trouble of ['other-key', 'dated-tomorrow'] as const) {
      fixture.misbehave.idTokens = trouble;
      expect((await api.post('/auth/provider/token', await token())).status, trouble).toBe(400);
    }
    fixture.reset();
    const response = await api.post('/auth/provider/token', await token());
    expect(response.status).toBe(200);
    const user = await latchkey.deps.store.users.findByEmail('ada@example.com');
    expect(await latchkey.deps.store.socialAccounts.listForUser(user!.id)).toMatchObject([{ provider: 'apple', uid: '001234.ada' }]);
  });

  it('takes one app whose client_id is "<services id>,<bundle id>": the first id for the redirect, the token call and the secret, the second as a token login’s audience', async () => {
    await setUp(clientKey.pem, true);
    // signIn checks the authorization request names the Services ID alone; the fixture knows no "a,b" client.
    const { response } = await signIn({ as: '001234.ada' });
    expect(response.headers.location).toBe('/');
    const user = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(await sessionUser()).toBe(user.id);
    // The token call's client_id is checked by the fixture against the secret's sub: both the Services ID.
    expect(fixture.acceptedSecrets).toHaveLength(1);
    expect(fixture.acceptedSecrets[0]).toMatchObject({ sub: WEB_CLIENT, iss: TEAM_ID, kid: KEY_ID });

    // The iOS app names the app by its client_id and brings an ID token issued to its bundle id.
    const api = new HeadlessTestClient(browser.app, 'app', latchkey);
    const tokenLogin = async (audience: string) => api.post('/auth/provider/token', { provider: 'apple', process: 'login', token: { client_id: `${WEB_CLIENT},${IOS_CLIENT}`, id_token: await fixture.idTokenFor('001234.ada', audience) } });
    const stranger = await tokenLogin('com.example.someone-else');
    expect(stranger.status).toBe(400);
    expect(stranger.body.errors).toMatchObject([{ code: 'invalid_token' }]);
    const accepted = await tokenLogin(IOS_CLIENT);
    expect(accepted.status).toBe(200);
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: 'apple', uid: '001234.ada' }]);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });
});
