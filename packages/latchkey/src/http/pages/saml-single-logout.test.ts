/**
 * SAML single logout on the pages, on every database, against the test IdP: a validly signed,
 * fresh LogoutRequest ends the browser's session only when it names that session, by the NameID
 * the SAML sign-in was for (its Format and NameQualifier included) and, when it names any, by the
 * SessionIndex the IdP gave that sign-in. Anything else ends nothing, whoever's browser brings it
 * (an attacker sending a victim's browser to their own logout request), and the IdP is told so.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { sessionUserOf } from '../../testing/corp-sso.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';
import { startTestSamlIdp, type LogoutRequestOptions, type SamlPerson, type TestSamlIdp } from '../../testing/saml-idp.js';
import { readRedirectLogoutResponse } from '../../testing/saml-messages.js';
import { samlApp, samlSiteUrls, signInThroughIdp } from '../../testing/saml-sign-in.js';

const MAIL = 'urn:oid:0.9.2342.19200300.100.1.3';
const VERIFIED = 'http://schemas.auth0.com/email_verified';
const SUCCESS = ['urn:oasis:names:tc:SAML:2.0:status:Success'];
const NOT_HERE = ['urn:oasis:names:tc:SAML:2.0:status:Requester', 'urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal'];
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const UNSPECIFIED_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';
/** The IdP names Ada by an opaque NameID (so its Format is unspecified) and her sign-in by this SessionIndex. */
const ADA: SamlPerson = { nameId: 'ada-at-acme', sessionIndex: '_idp-session-ada', attributes: { [MAIL]: 'ada@acme.example', [VERIFIED]: 'true' } };
const MALLORY: SamlPerson = { nameId: 'mallory-at-acme', sessionIndex: '_idp-session-mallory', attributes: { [MAIL]: 'mallory@acme.example', [VERIFIED]: 'true' } };

let idp: TestSamlIdp;
beforeAll(async () => {
  idp = await startTestSamlIdp();
});
afterAll(() => idp.close());

describe.each(testDatabaseKinds())('SAML single logout ends only the session it names, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: samlApp(idp) } });
    browser = await PageClient.create(latchkey);
  }
  const userIdOf = async (email: string) => (await latchkey.deps.store.users.findByEmail(email))!.id;

  /** Signs `client` in through the IdP as `person`, and checks that it worked. */
  async function signIn(person: SamlPerson, client = browser): Promise<void> {
    const { response } = await signInThroughIdp(latchkey, client, idp, person);
    expect(response.headers.location, response.body).toBe('/');
  }

  /** The browser brings the IdP's signed, fresh LogoutRequest to our SLS: the StatusCodes of the LogoutResponse it is sent back to the IdP with. */
  async function logout(request: Omit<LogoutRequestOptions, 'slsUrl' | 'now'>, client = browser): Promise<string[]> {
    const url = new URL(idp.logoutRequestUrl({ ...request, slsUrl: samlSiteUrls(latchkey).sls, now: latchkey.clock.now() }));
    const answered = await client.get(url.pathname + url.search);
    expect(answered.statusCode, answered.body).toBe(302);
    const back = new URL(answered.headers.location!);
    expect(back.origin + back.pathname).toBe(idp.sloUrl);
    return readRedirectLogoutResponse(back).statusCodes;
  }

  it("leaves the victim signed in when the request names someone else: another NameID, another Format, another IdP's qualifier", async () => {
    await setUp();
    await signIn(ADA);
    const ada = await userIdOf('ada@acme.example');
    // Mallory's own logout, signed by the IdP for her, brought by Ada's browser.
    const attacker = browser.another();
    await signIn(MALLORY, attacker);
    expect(await logout({ nameId: MALLORY.nameId, sessionIndex: MALLORY.sessionIndex! })).toEqual(NOT_HERE);
    expect(await logout({ nameId: MALLORY.nameId })).toEqual(NOT_HERE);
    // Ada's NameID text, but in another format or another IdP's namespace: another identifier.
    expect(await logout({ nameId: ADA.nameId, nameIdFormat: EMAIL_FORMAT })).toEqual(NOT_HERE);
    expect(await logout({ nameId: ADA.nameId, nameQualifier: 'https://other-idp.example/metadata' })).toEqual(NOT_HERE);
    expect(await sessionUserOf(latchkey, browser)).toBe(ada);
    expect(await sessionUserOf(latchkey, attacker)).toBe(await userIdOf('mallory@acme.example'));
  });

  it('leaves the session alone for another SessionIndex, and ends it when its SessionIndex is among those named', async () => {
    await setUp();
    await signIn(ADA);
    const ada = await userIdOf('ada@acme.example');
    expect(await logout({ nameId: ADA.nameId, sessionIndex: '_idp-session-other' })).toEqual(NOT_HERE);
    expect(await sessionUserOf(latchkey, browser)).toBe(ada);
    // The NameID as the sign-in gave it, Format and the IdP's own qualifier spelled out.
    const named = { nameId: ADA.nameId, nameIdFormat: UNSPECIFIED_FORMAT, nameQualifier: idp.entityId };
    expect(await logout({ ...named, sessionIndex: ['_idp-session-other', ADA.sessionIndex!] })).toEqual(SUCCESS);
    expect(await sessionUserOf(latchkey, browser)).toBeFalsy();
  });

  it('ends the session for its NameID when the request names no SessionIndex (every session of that NameID)', async () => {
    await setUp();
    await signIn(ADA);
    expect(await logout({ nameId: ADA.nameId })).toEqual(SUCCESS);
    expect(await sessionUserOf(latchkey, browser)).toBeFalsy();
    // Nobody is signed in now: nothing of Ada's is left here to end.
    expect(await logout({ nameId: ADA.nameId })).toEqual(NOT_HERE);
  });

  it('ends a SAML sign-in that finished after an authenticator code, as it was recorded at the IdP', async () => {
    await setUp();
    await signIn(ADA);
    const totp = await activateTotpFor(latchkey, (await latchkey.deps.store.users.findByEmail('ada@acme.example'))!);
    const again = browser.another();
    const { response } = await signInThroughIdp(latchkey, again, idp, { ...ADA, sessionIndex: '_idp-session-ada-2' });
    expect(response.headers.location).toBe('/accounts/2fa/authenticate/');
    expect((await again.post('/accounts/2fa/authenticate/', { code: totp.code() })).statusCode).toBe(302);
    expect(await logout({ nameId: ADA.nameId, sessionIndex: ADA.sessionIndex! }, again)).toEqual(NOT_HERE);
    expect(await logout({ nameId: ADA.nameId, sessionIndex: '_idp-session-ada-2' }, again)).toEqual(SUCCESS);
    expect(await sessionUserOf(latchkey, again)).toBeFalsy();
  });

  it("never ends a session signed in without the IdP, even one whose user has an account there that the request names", async () => {
    await setUp();
    const password = 'a long and good password 1';
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password, emailVerified: true });
    const now = latchkey.clock.now();
    await latchkey.deps.store.socialAccounts.create({ userId: grace.id, provider: idp.entityId, uid: 'grace-at-acme', extraData: {}, dateJoined: now, lastLogin: now });
    expect((await browser.post('/accounts/login/', { login: 'grace', password })).headers.location).toBe('/');
    expect(await logout({ nameId: 'grace-at-acme' })).toEqual(NOT_HERE);
    expect(await sessionUserOf(latchkey, browser)).toBe(grace.id);
  });
});
