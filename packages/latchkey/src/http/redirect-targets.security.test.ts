/**
 * A `next` outside ASCII (issue 30): it passed the same-site check, then the login answered 500
 * (ERR_INVALID_CHAR: a Location header carries Latin-1 only) without setting the session. On the
 * login and signup pages, the admin's login and an IdP-initiated SAML sign-in's RelayState, on
 * every database: a safe target is followed, percent-encoded as a browser would request it; an
 * unsafe one falls back; never a 500, and the person is signed in either way.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../account/users.js';
import type { SettingValues } from '../config/settings.js';
import { sessionUserOf } from '../testing/corp-sso.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { mainOf, PageClient } from '../testing/pages.js';
import { decodedValue, REDIRECT_TARGET_CASES } from '../testing/redirect-targets.js';
import { startTestSamlIdp, type TestSamlIdp } from '../testing/saml-idp.js';
import { postToAcs, responseFor, samlApp } from '../testing/saml-sign-in.js';

const PASSWORD = 'a long enough passphrase';
const SAML_EMAIL = 'urn:oid:0.9.2342.19200300.100.1.3';
const SAML_EMAIL_VERIFIED = 'http://schemas.auth0.com/email_verified';

/** A form posted with this browser's CSRF token, its fields already encoded (`next` exactly as the case puts it on the wire). */
async function postWire(browser: PageClient, url: string, fields: string): Promise<LightMyRequestResponse> {
  if (!browser.cookies.has('csrftoken')) await browser.get('/accounts/login/');
  const response = await browser.app.inject({
    method: 'POST',
    url,
    payload: `csrfmiddlewaretoken=${browser.cookies.get('csrftoken')}&${fields}`,
    headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' },
    cookies: Object.fromEntries(browser.cookies),
  });
  for (const cookie of response.cookies) browser.cookies.set(cookie.name, cookie.value);
  return response;
}

/** The answer is a redirect to the case's target (or `fallback`): never a 500. */
function expectRedirect(response: LightMyRequestResponse, target: string, name: string): void {
  expect(response.statusCode, `${name}: ${response.body.slice(0, 200)}`).toBe(302);
  expect(response.headers.location, name).toBe(target);
}

let idp: TestSamlIdp;
beforeAll(async () => {
  idp = await startTestSamlIdp();
});
afterAll(() => idp.close());

describe.each(testDatabaseKinds())('redirect targets outside ASCII on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ACCOUNT_RATE_LIMITS: false, ...settings } });
    browser = await PageClient.create(latchkey);
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true, isStaff: true, isSuperuser: true });
  }

  it('the login page: the form carries the encoded target, the right password follows it or falls back, signed in', async () => {
    await setUp();
    for (const { name, wire, target } of REDIRECT_TARGET_CASES) {
      const visitor = browser.another();
      const page = await visitor.get(`/accounts/login/?next=${wire}`);
      expect(page.statusCode, name).toBe(200);
      if (target === undefined) expect(mainOf(page.body), name).not.toContain('name="next"');
      else expect(page.body, name).toContain(`name="next" value="${target}"`);
      const answer = await postWire(visitor, '/accounts/login/', `login=ada&password=${encodeURIComponent(PASSWORD)}&next=${wire}`);
      expectRedirect(answer, target ?? '/', name);
      expect(await sessionUserOf(latchkey, visitor), name).toBeTypeOf('number');
    }
  });

  it('the login and signup pages, visited while signed in, send the browser on to the target', async () => {
    await setUp();
    await postWire(browser, '/accounts/login/', `login=ada&password=${encodeURIComponent(PASSWORD)}`);
    for (const { name, wire, target } of REDIRECT_TARGET_CASES) {
      expectRedirect(await browser.get(`/accounts/login/?next=${wire}`), target ?? '/', `login: ${name}`);
      expectRedirect(await browser.get(`/accounts/signup/?next=${wire}`), target ?? '/', `signup: ${name}`);
      expectRedirect(await postWire(browser, '/accounts/signup/', `next=${wire}`), target ?? '/', `signup form: ${name}`);
    }
  });

  it('the signup form signs the new person in and follows the target or falls back', async () => {
    await setUp();
    for (const [index, { name, wire, target }] of REDIRECT_TARGET_CASES.entries()) {
      const visitor = browser.another();
      const fields = `username=person${index}&email=person${index}%40example.com&password1=${encodeURIComponent(PASSWORD)}&password2=${encodeURIComponent(PASSWORD)}`;
      expectRedirect(await postWire(visitor, '/accounts/signup/', `${fields}&next=${wire}`), target ?? '/', name);
      expect(await sessionUserOf(latchkey, visitor), name).toBeTypeOf('number');
    }
  });

  it("the admin's login follows the target or falls back to the admin's index, signed in; and so does a visit while signed in", async () => {
    await setUp();
    for (const { name, wire, target } of REDIRECT_TARGET_CASES) {
      const visitor = browser.another();
      expectRedirect(await postWire(visitor, '/admin/login/', `username=ada&password=${encodeURIComponent(PASSWORD)}&next=${wire}`), target ?? '/admin/', name);
      expect(await sessionUserOf(latchkey, visitor), name).toBeTypeOf('number');
      expectRedirect(await visitor.get(`/admin/login/?next=${wire}`), target ?? '/admin/', `visit: ${name}`);
    }
  });

  it('an IdP-initiated SAML sign-in follows its RelayState, encoded, or falls back, signed in', async () => {
    await setUp({ SOCIALACCOUNT_PROVIDERS: samlApp(idp, { settings: { advanced: { reject_idp_initiated_sso: false } } }) });
    const person = { nameId: 'mallory@example.com', attributes: { [SAML_EMAIL]: 'mallory@example.com', [SAML_EMAIL_VERIFIED]: 'true' } };
    for (const { name, wire, target } of REDIRECT_TARGET_CASES) {
      const visitor = browser.another();
      expectRedirect(await postToAcs(visitor, responseFor(latchkey, idp, person, undefined), decodedValue(wire)), target ?? '/', name);
      expect(await sessionUserOf(latchkey, visitor), name).toBeTypeOf('number');
    }
  });
});
