/**
 * Security keys and passkeys where a person proves who they are, through the pages: the login's
 * second step with a key, reauthentication with a key, and passkey login from the login page
 * (MFA_PASSKEY_LOGIN_ENABLED); on every database. The key is a software authenticator answering
 * the options the page's script would fetch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser, deactivateUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, addWebauthnKeyFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';
import type { SoftwareAuthenticator } from '../../testing/webauthn-authenticator.js';
import { fieldErrors, postAssertion } from '../../testing/webauthn-pages.js';

const PASSWORD = 'a long enough passphrase';
const AUTHENTICATE = '/accounts/2fa/authenticate/';
const REAUTHENTICATE = '/accounts/2fa/reauthenticate/';
const REAUTHENTICATE_BY_KEY = '/accounts/2fa/webauthn/reauthenticate/';
const PASSKEY_LOGIN = '/accounts/2fa/webauthn/login/';
const STALE_MS = 301 * 1000;
const REFUSED = 'The security key could not be verified. Please try again.';
const WEBAUTHN: Partial<SettingValues> = { MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'], MFA_PASSKEY_LOGIN_ENABLED: true };

describe.each(testDatabaseKinds())('signing in with security keys and passkeys on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  let key: SoftwareAuthenticator;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}, options: { passwordless?: boolean } = {}) {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...WEBAUTHN, ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    ({ authenticator: key } = await addWebauthnKeyFor(latchkey, ada, { passwordless: options.passwordless ?? false, name: 'Blue key' }));
    latchkey.mailer.clear();
  }

  const login = (client: PageClient) => client.post('/accounts/login/', { login: 'ada', password: PASSWORD });
  const signedInUserId = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;

  describe("the login's second step", () => {
    it('offers the key (the only factor besides recovery codes) and signs in with it', async () => {
      await setUp();
      expect((await login(browser)).headers.location).toBe(AUTHENTICATE);
      const page = await browser.get(AUTHENTICATE);
      expect(page.body).toContain('Use your security key, or enter one of your recovery codes.');
      expect(page.body).toContain('data-webauthn="get"');
      expect(page.body).toContain('>Use a security key</button>');
      const done = await postAssertion(browser, key, AUTHENTICATE);
      expect(done.statusCode).toBe(302);
      expect(done.headers.location).toBe(latchkey.settings.LOGIN_REDIRECT_URL);
      expect(await signedInUserId(browser)).toBe(ada.id);
      const [stored] = (await latchkey.deps.store.authenticators.listForUser(ada.id)).filter((each) => each.type === 'webauthn');
      expect(stored!.lastUsedAt).not.toBeNull();
    });

    it('with an authenticator app too, the page offers both', async () => {
      await setUp();
      const totp = await activateTotpFor(latchkey, ada);
      await login(browser);
      const page = await browser.get(AUTHENTICATE);
      expect(page.body).toContain('Enter the code your authenticator app shows now, or one of your recovery codes.');
      expect(page.body).toContain('>Use a security key</button>');
      expect((await browser.post(AUTHENTICATE, { code: totp.code() })).statusCode).toBe(302);
      expect(await signedInUserId(browser)).toBe(ada.id);
    });

    it('a wrong answer is shown under the key button, and the login still waits', async () => {
      await setUp();
      await login(browser);
      const foreign = await postAssertion(browser, key, AUTHENTICATE, AUTHENTICATE, {}, { origin: 'https://evil.example' });
      expect(foreign.statusCode).toBe(400);
      expect(fieldErrors(foreign.body, 'credential')).toEqual([REFUSED]);
      const garbage = await browser.post(AUTHENTICATE, { credential: '{' });
      expect(fieldErrors(garbage.body, 'credential')).toEqual([REFUSED]);
      expect(await signedInUserId(browser)).toBeNull();
      expect((await postAssertion(browser, key, AUTHENTICATE)).statusCode).toBe(302);
    });

    it('gives no options to a browser without a login waiting at this step', async () => {
      await setUp();
      const options = await browser.get(AUTHENTICATE, { accept: 'application/json' });
      expect(options.statusCode).toBe(409);
      expect(JSON.parse(options.body)).toEqual({ location: '/accounts/login/' });
    });
  });

  describe('reauthentication', () => {
    it('a stale session confirms with the key and goes on to the change', async () => {
      await setUp();
      await login(browser);
      await postAssertion(browser, key, AUTHENTICATE);
      latchkey.clock.advance(STALE_MS);
      const authenticatorId = (await latchkey.deps.store.authenticators.listForUser(ada.id)).find((each) => each.type === 'webauthn')!.id;
      const remove = `/accounts/2fa/webauthn/keys/${authenticatorId}/remove/`;
      expect((await browser.get(remove)).headers.location).toBe(`/accounts/reauthenticate/?next=${encodeURIComponent(remove)}`);
      const passwordPage = await browser.get(`/accounts/reauthenticate/?next=${encodeURIComponent(remove)}`);
      expect(passwordPage.body).toContain('>Use a security key or another second factor instead</a>');
      const page = await browser.get(`${REAUTHENTICATE}?next=${encodeURIComponent(remove)}`);
      expect(page.body).toContain(`action="${REAUTHENTICATE_BY_KEY}"`);
      expect(page.body).toContain(`<input type="hidden" name="next" value="${remove}">`);
      // allauth's own path shows the same page.
      expect((await browser.get(REAUTHENTICATE_BY_KEY)).body).toContain('>Use a security key</button>');
      const confirmed = await postAssertion(browser, key, REAUTHENTICATE_BY_KEY, REAUTHENTICATE_BY_KEY, { next: remove });
      expect(confirmed.headers.location).toBe(remove);
      expect((await browser.get(remove)).statusCode).toBe(200);
    });

    it('a wrong answer is a form error and proves nothing', async () => {
      await setUp();
      await login(browser);
      await postAssertion(browser, key, AUTHENTICATE);
      latchkey.clock.advance(STALE_MS);
      const refused = await postAssertion(browser, key, REAUTHENTICATE_BY_KEY, REAUTHENTICATE_BY_KEY, {}, { rpId: 'evil.example' });
      expect(refused.statusCode).toBe(400);
      expect(fieldErrors(refused.body, 'credential')).toEqual([REFUSED]);
      // Still not recently authenticated: adding a key asks again.
      expect((await browser.get('/accounts/2fa/webauthn/add/')).headers.location).toMatch(/^\/accounts\/reauthenticate\//);
    });
  });

  describe('passkey login', () => {
    it('the login page offers it; the passkey alone signs in, as both factors', async () => {
      await setUp({}, { passwordless: true });
      const page = await browser.get('/accounts/login/?next=/accounts/email/');
      expect(page.body).toContain('>Sign in with a passkey</button>');
      expect(page.body).toContain(`action="${PASSKEY_LOGIN}"`);
      const options = await browser.get(PASSKEY_LOGIN, { accept: 'application/json' });
      expect(JSON.parse(options.body).request_options.publicKey).toMatchObject({ rpId: 'testserver', userVerification: 'required', allowCredentials: [] });
      const done = await postAssertion(browser, key, PASSKEY_LOGIN, PASSKEY_LOGIN, { next: '/accounts/email/' });
      expect(done.statusCode).toBe(302);
      expect(done.headers.location).toBe('/accounts/email/');
      expect(await signedInUserId(browser)).toBe(ada.id);
      // A plain GET of the answer's path is the login page's business.
      expect((await browser.another().get(PASSKEY_LOGIN)).headers.location).toBe('/accounts/login/');
    });

    it('a refused passkey is shown on the login page under its button', async () => {
      await setUp({}, { passwordless: true });
      const unverified = await postAssertion(browser, key, PASSKEY_LOGIN, PASSKEY_LOGIN, {}, { userVerified: false });
      expect(unverified.statusCode).toBe(400);
      expect(unverified.body).toContain('name="password"');
      expect(fieldErrors(unverified.body, 'credential')).toEqual([REFUSED]);
      // The same (used) challenge cannot be answered again.
      const replay = await browser.post(PASSKEY_LOGIN, { credential: '{"id":"x","response":{}}' });
      expect(fieldErrors(replay.body, 'credential')).toEqual([REFUSED]);
      expect(await signedInUserId(browser)).toBeNull();
    });

    it('an inactive account gets the inactive page, not a session', async () => {
      await setUp({}, { passwordless: true });
      await deactivateUser(latchkey.deps, ada);
      const done = await postAssertion(browser, key, PASSKEY_LOGIN);
      expect(done.headers.location).toBe('/accounts/inactive/');
      expect(await signedInUserId(browser)).toBeNull();
    });

    it('is absent when MFA_PASSKEY_LOGIN_ENABLED is off', async () => {
      await setUp({ MFA_PASSKEY_LOGIN_ENABLED: false });
      expect((await browser.get('/accounts/login/')).body).not.toContain('Sign in with a passkey');
      expect((await browser.get(PASSKEY_LOGIN, { accept: 'application/json' })).statusCode).toBe(404);
      expect((await browser.post(PASSKEY_LOGIN, { credential: '{}' })).statusCode).toBe(404);
    });
  });
});
