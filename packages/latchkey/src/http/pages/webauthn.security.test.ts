/**
 * Attacks on the security key pages: another user's key by id (IDOR), CSRF on every form that
 * takes a key's answer or changes a key, changes without a recent reauthentication, and answers
 * that must not count: replayed, begun in another browser, made for another purpose, by another
 * user's key, or by a cloned key; on every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { addWebauthnKeyFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';
import type { SoftwareAuthenticator } from '../../testing/webauthn-authenticator.js';
import { creationOptionsFrom, fieldErrors, postAssertion, requestOptionsFrom } from '../../testing/webauthn-pages.js';

const PASSWORD = 'a long enough passphrase';
const AUTHENTICATE = '/accounts/2fa/authenticate/';
const PASSKEY_LOGIN = '/accounts/2fa/webauthn/login/';
const REAUTHENTICATE_BY_KEY = '/accounts/2fa/webauthn/reauthenticate/';
const REFUSED = 'The security key could not be verified. Please try again.';
const STALE_MS = 301 * 1000;

describe.each(testDatabaseKinds())('security key pages under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  let adaKey: { authenticator: SoftwareAuthenticator; authenticatorId: number; credentialId: string };
  let eveKey: { authenticator: SoftwareAuthenticator; authenticatorId: number; credentialId: string };
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp() {
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'], MFA_PASSKEY_LOGIN_ENABLED: true },
    });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const eve = await createUser(latchkey.deps, { username: 'eve', email: 'eve@example.com', password: PASSWORD, emailVerified: true });
    adaKey = await addWebauthnKeyFor(latchkey, ada, { name: 'Ada key' });
    eveKey = await addWebauthnKeyFor(latchkey, eve, { name: 'Eve key' });
  }

  const login = (client: PageClient) => client.post('/accounts/login/', { login: 'ada', password: PASSWORD });
  const signedInUserId = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const keyName = async (id: number) => (await latchkey.deps.store.authenticators.findById(id))?.data.name;

  /** Ada fully signed in, with her key as the second factor. */
  async function signedInAda(client = browser) {
    await login(client);
    expect((await postAssertion(client, adaKey.authenticator, AUTHENTICATE)).statusCode).toBe(302);
  }

  it("another user's key is a 404 on every page, and stays as it was", async () => {
    await setUp();
    await signedInAda();
    const edit = `/accounts/2fa/webauthn/keys/${eveKey.authenticatorId}/edit/`;
    const remove = `/accounts/2fa/webauthn/keys/${eveKey.authenticatorId}/remove/`;
    expect((await browser.get(edit)).statusCode).toBe(404);
    expect((await browser.post(edit, { name: 'Mine now' })).statusCode).toBe(404);
    expect((await browser.get(remove)).statusCode).toBe(404);
    expect((await browser.post(remove, {})).statusCode).toBe(404);
    expect(await keyName(eveKey.authenticatorId)).toBe('Eve key');
    for (const id of ['abc', '1e3', '-1', '99999999']) expect((await browser.get(`/accounts/2fa/webauthn/keys/${id}/edit/`)).statusCode).toBe(404);
    expect((await browser.get('/accounts/2fa/webauthn/')).body).not.toContain('Eve key');
  });

  it('every form refuses a POST without the CSRF token, changing nothing', async () => {
    await setUp();
    await login(browser);
    // The second step, answered without the token: refused, and the login still waits.
    const assertion = adaKey.authenticator.get(await requestOptionsFrom(browser, AUTHENTICATE));
    expect((await browser.post(AUTHENTICATE, { credential: JSON.stringify(assertion) }, { csrf: false })).statusCode).toBe(403);
    expect(await signedInUserId(browser)).toBeNull();
    await postAssertion(browser, adaKey.authenticator, AUTHENTICATE);
    const credential = JSON.stringify(adaKey.authenticator.create(await creationOptionsFrom(browser, '/accounts/2fa/webauthn/add/')));
    const forms: [string, Record<string, string>][] = [
      ['/accounts/2fa/webauthn/add/', { name: 'Forged', credential }],
      [`/accounts/2fa/webauthn/keys/${adaKey.authenticatorId}/edit/`, { name: 'Forged' }],
      [`/accounts/2fa/webauthn/keys/${adaKey.authenticatorId}/remove/`, {}],
      [REAUTHENTICATE_BY_KEY, { credential: '{}' }],
      [PASSKEY_LOGIN, { credential: '{}' }],
    ];
    for (const [path, fields] of forms) expect((await browser.post(path, fields, { csrf: false })).statusCode, path).toBe(403);
    const keys = (await latchkey.deps.store.authenticators.listForUser(ada.id)).filter((each) => each.type === 'webauthn');
    expect(keys.map((each) => each.data.name)).toEqual(['Ada key']);
  });

  it('adding, renaming or removing a key needs a recent reauthentication, even by a direct request', async () => {
    await setUp();
    await signedInAda();
    latchkey.clock.advance(STALE_MS);
    const reauthenticateFor = (path: string) => `/accounts/reauthenticate/?next=${encodeURIComponent(path)}`;
    const edit = `/accounts/2fa/webauthn/keys/${adaKey.authenticatorId}/edit/`;
    const remove = `/accounts/2fa/webauthn/keys/${adaKey.authenticatorId}/remove/`;
    for (const path of [edit, remove]) {
      expect((await browser.get(path)).headers.location, path).toBe(reauthenticateFor(path));
      const posted = await browser.post(path, { name: 'Renamed by a thief' });
      expect(posted.statusCode, path).toBe(302);
      expect(posted.headers.location, path).toBe(reauthenticateFor(path));
    }
    expect(await keyName(adaKey.authenticatorId)).toBe('Ada key');
    // The script's request for options (sent when the button is pressed) is refused too, and told where to go.
    const add = '/accounts/2fa/webauthn/add/';
    const options = await browser.get(add, { accept: 'application/json' });
    expect(options.statusCode).toBe(401);
    expect(JSON.parse(options.body)).toMatchObject({ location: reauthenticateFor(add) });
  });

  it('an answer counts once, in the browser that asked, for the purpose it was asked for', async () => {
    await setUp();
    await login(browser);
    const assertion = JSON.stringify(adaKey.authenticator.get(await requestOptionsFrom(browser, AUTHENTICATE)));

    // Another browser that holds a login of Ada's own (it knows the password) cannot use it.
    const other = browser.another();
    await login(other);
    expect(fieldErrors((await other.post(AUTHENTICATE, { credential: assertion })).body, 'credential')).toEqual([REFUSED]);
    expect(await signedInUserId(other)).toBeNull();

    // Nor as a passkey login, begun for another purpose.
    await browser.get(PASSKEY_LOGIN, { accept: 'application/json' });
    expect(fieldErrors((await browser.post(PASSKEY_LOGIN, { credential: assertion })).body, 'credential')).toEqual([REFUSED]);

    // In its own browser it signs in once; replayed in a later login, it is refused.
    expect((await browser.post(AUTHENTICATE, { credential: assertion })).statusCode).toBe(302);
    await browser.post('/accounts/logout/', {});
    await login(browser);
    await requestOptionsFrom(browser, AUTHENTICATE);
    expect(fieldErrors((await browser.post(AUTHENTICATE, { credential: assertion })).body, 'credential')).toEqual([REFUSED]);
  });

  it("another user's key, and a cloned key whose counter went back, are refused", async () => {
    await setUp();
    await login(browser);
    const options = await requestOptionsFrom(browser, AUTHENTICATE);
    const eves = eveKey.authenticator.get({ ...options, allowCredentials: [{ id: eveKey.credentialId, type: 'public-key' }] });
    expect(fieldErrors((await browser.post(AUTHENTICATE, { credential: JSON.stringify(eves) })).body, 'credential')).toEqual([REFUSED]);

    await postAssertion(browser, adaKey.authenticator, AUTHENTICATE);
    await browser.post('/accounts/logout/', {});
    await login(browser);
    const cloned = await postAssertion(browser, adaKey.authenticator, AUTHENTICATE, AUTHENTICATE, {}, { counter: 1 });
    expect(fieldErrors(cloned.body, 'credential')).toEqual([REFUSED]);
    expect(await signedInUserId(browser)).toBeNull();
  });
});
