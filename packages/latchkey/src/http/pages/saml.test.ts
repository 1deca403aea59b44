/**
 * Signing in with a SAML 2.0 identity provider on the pages, against the test IdP on loopback, on
 * every database: signup then sign-in, MFA after the IdP, the attribute mapping, the login page's
 * button, the metadata round trip through the IdP's real /sso, an IdP known only by its metadata
 * URL, IdP-initiated sign-in, single logout, and signup closed or opened by the project's adapter.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { SocialAccountAdapter, type SocialLogin } from '../../socialaccount/adapter.js';
import type { SettingValues } from '../../config/settings.js';
import { sessionUserOf } from '../../testing/corp-sso.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';
import { createTestKeyPair } from '../../testing/saml-keys.js';
import { readMetadataSignature } from '../../testing/saml-messages.js';
import { addSocialApp, MANAGEMENT_COMMAND } from '../../socialaccount/flows/manage-apps.js';
import { startTestSamlIdp, type SamlPerson, type TestSamlIdp } from '../../testing/saml-idp.js';
import { postToAcs, responseFor, SAML_LOGIN, samlApp, samlSiteUrls, signInThroughIdp, startSignIn, throughIdpSso, type SamlAppOverrides } from '../../testing/saml-sign-in.js';

const MAIL = 'urn:oid:0.9.2342.19200300.100.1.3';
const VERIFIED = 'http://schemas.auth0.com/email_verified';
const ADA: SamlPerson = {
  nameId: 'ada-at-acme',
  attributes: { [MAIL]: 'ada@acme.example', [VERIFIED]: 'true', 'urn:oid:2.5.4.42': 'Ada', 'urn:oid:2.5.4.4': 'Lovelace', 'http://schemas.auth0.com/nickname': 'ada', department: ['Engineering', 'Research'] },
};
const ERROR_PAGE = '/accounts/3rdparty/login/error/';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const RSA_SHA512 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512';
const CLIENT = { ip: '127.0.0.1', userAgent: 'test' };

/** Attributes as the social account keeps them: each a list of its values. */
function asLists(attributes: Record<string, string | string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(attributes).map(([name, value]) => [name, Array.isArray(value) ? value : [value]]));
}

let latchkey: TestLatchkey;
let idp: TestSamlIdp;
/** Serves the IdP's metadata as its metadata_url, counting the requests. */
let metadataServer: Server;
let metadataRequests = 0;
beforeAll(async () => {
  // The IdP's own /sso answers on the site's clock, which checks the answer.
  idp = await startTestSamlIdp({ now: () => latchkey.clock.now() });
  metadataServer = createServer((_request, response) => {
    metadataRequests += 1;
    response.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(idp.metadataXml());
  });
  await new Promise<void>((resolve) => metadataServer.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await idp.close();
  await new Promise((resolve) => metadataServer.close(resolve));
});

describe.each(testDatabaseKinds())('signing in with a SAML identity provider on the pages, on %s', (kind) => {
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}, app: SamlAppOverrides = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: samlApp(idp, app), ...settings } });
    browser = await PageClient.create(latchkey);
  }
  const signIn = (person: SamlPerson, client = browser) => signInThroughIdp(latchkey, client, idp, person);
  const sessionUser = (client = browser) => sessionUserOf(latchkey, client);
  const userOf = async (email: string) => (await latchkey.deps.store.users.findByEmail(email))!;
  const accountsOf = async (email: string) => latchkey.deps.store.socialAccounts.listForUser((await userOf(email)).id);
  const addressesOf = async (email: string) => latchkey.deps.store.emailAddresses.listForUser((await userOf(email)).id);

  it('signs a new person up with the verified address the IdP vouches for, then signs them in again', async () => {
    await setUp();
    const { response } = await signIn(ADA);
    expect([response.statusCode, response.headers.location]).toEqual([302, '/']);
    const ada = await userOf('ada@acme.example');
    expect(ada).toMatchObject({ username: 'ada', name: 'Ada Lovelace' });
    expect(await sessionUser()).toBe(ada.id);
    expect(await addressesOf('ada@acme.example')).toMatchObject([{ email: 'ada@acme.example', verified: true, primary: true }]);
    expect(await accountsOf('ada@acme.example')).toMatchObject([{ provider: idp.entityId, uid: 'ada-at-acme' }]);
    const events = (await latchkey.deps.store.auditLog.listForUser(ada.id, 100)).map((record) => record.event);
    expect(events).toEqual(expect.arrayContaining(['user_signed_up', 'social_account_added', 'user_logged_in']));

    // Another browser, and the IdP now says another department: the account keeps what it said last.
    const again = browser.another();
    expect((await signIn({ ...ADA, attributes: { ...ADA.attributes, department: 'Sales' } }, again)).response.headers.location).toBe('/');
    expect(await sessionUser(again)).toBe(ada.id);
    expect(await latchkey.deps.store.users.count()).toBe(1);
    expect(await accountsOf('ada@acme.example')).toMatchObject([{ uid: 'ada-at-acme', extraData: { department: ['Sales'] } }]);
  });

  it('asks to verify an address the IdP does not vouch for, and keeps it unverified', async () => {
    await setUp();
    const { response } = await signIn({ nameId: 'grace-at-acme', attributes: { [MAIL]: 'grace@acme.example' } });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('We have sent an email to verify your address.');
    expect(await addressesOf('grace@acme.example')).toMatchObject([{ email: 'grace@acme.example', verified: false }]);
    expect(latchkey.mailer.lastTo('grace@acme.example')).toBeDefined();
    expect(await sessionUser()).toBeFalsy();
  });

  it('asks for the authenticator code after the IdP when the person has one', async () => {
    await setUp();
    await signIn(ADA);
    const totp = await activateTotpFor(latchkey, await userOf('ada@acme.example'));
    const again = browser.another();
    expect((await signIn(ADA, again)).response.headers.location).toBe('/accounts/2fa/authenticate/');
    expect(await sessionUser(again)).toBeNull();
    expect((await again.post('/accounts/2fa/authenticate/', { code: totp.code() })).statusCode).toBe(302);
    expect(await sessionUser(again)).toBe((await userOf('ada@acme.example')).id);
  });

  it('maps attributes: custom lists where the first present wins, truthy email_verified strings, the NameID as uid and email, every attribute kept', async () => {
    const attribute_mapping = { uid: ['employeeNumber', 'uid'], email: ['mail', 'otherMail'], email_verified: ['mailVerified'], first_name: 'givenName', last_name: 'sn', username: ['login'] };
    await setUp({}, { settings: { attribute_mapping } });
    const bob = { nameId: 'ignored', attributes: { uid: 'bob-uid', employeeNumber: ['', 'E-42'], otherMail: 'other@acme.example', mail: 'bob@acme.example', mailVerified: 'YES', givenName: 'Bob', sn: 'Builder', login: 'bobb' } };
    expect((await signIn(bob)).response.headers.location).toBe('/');
    expect(await userOf('bob@acme.example')).toMatchObject({ username: 'bobb', name: 'Bob Builder' });
    expect(await addressesOf('bob@acme.example')).toMatchObject([{ email: 'bob@acme.example', verified: true }]);
    expect(await accountsOf('bob@acme.example')).toMatchObject([{ uid: 'E-42', extraData: asLists(bob.attributes) }]);

    // The second name in a list serves when the first is absent; without a uid attribute, the NameID is the uid.
    const carol = { nameId: 'carol-name-id', attributes: { otherMail: 'carol@acme.example', mailVerified: 'no' } };
    await signIn(carol, browser.another());
    expect(await addressesOf('carol@acme.example')).toMatchObject([{ verified: false }]);
    expect(await accountsOf('carol@acme.example')).toMatchObject([{ uid: 'carol-name-id' }]);

    for (const [index, value] of ['true', '1', 't', 'y', 'Yes', ' TRUE ', 'false', '0', 'n', 'verified', ''].entries()) {
      const email = `person${index}@acme.example`;
      await signIn({ nameId: `person-${index}`, attributes: { mail: email, mailVerified: value } }, browser.another());
      const verified = ['true', '1', 't', 'y', 'yes'].includes(value.trim().toLowerCase());
      expect((await addressesOf(email))[0]?.verified, JSON.stringify(value)).toBe(verified);
    }
  });

  it('takes the NameID as the address with use_nameid_for_email, or when its format is emailAddress, and never otherwise', async () => {
    await setUp({}, { settings: { use_nameid_for_email: true, attribute_mapping: { email_verified: 'verified' } } });
    const unspecified = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';
    await signIn({ nameId: 'dana@acme.example', nameIdFormat: unspecified, attributes: { verified: 'true' } });
    expect(await accountsOf('dana@acme.example')).toMatchObject([{ uid: 'dana@acme.example' }]);
    expect(await addressesOf('dana@acme.example')).toMatchObject([{ verified: true }]);
    await latchkey.destroy();
    await browser.close();

    await setUp({}, { settings: { attribute_mapping: { email_verified: 'verified' } } });
    await signIn({ nameId: 'erin@acme.example', attributes: { verified: 'true' } });
    expect(await accountsOf('erin@acme.example')).toMatchObject([{ uid: 'erin@acme.example' }]);
    // An address-like NameID of another format is an identifier, not an address: the signup form asks for one.
    const { response } = await signIn({ nameId: 'fay@acme.example', nameIdFormat: unspecified }, browser.another());
    expect(response.headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await latchkey.deps.store.users.findByEmail('fay@acme.example')).toBeUndefined();
  });

  it('lists the app on the login page by its organisation URL; a GET there only asks, unless SOCIALACCOUNT_LOGIN_ON_GET', async () => {
    await setUp();
    const loginPage = await browser.get('/accounts/login/');
    expect(loginPage.body).toContain(`href="${SAML_LOGIN}"`);
    expect(loginPage.body).toContain('Acme SSO');
    const asked = await browser.get(SAML_LOGIN);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain(`<form method="post" action="${SAML_LOGIN}"`);
    expect(asked.headers['content-security-policy']).toContain(`form-action 'self' ${idp.origin};`);
    expect((await browser.post(SAML_LOGIN, {}, { csrf: false })).statusCode).toBe(403);
    expect((await browser.get('/accounts/saml/nobody/login/')).statusCode).toBe(404);
    await latchkey.destroy();
    await browser.close();

    await setUp({ SOCIALACCOUNT_LOGIN_ON_GET: true });
    const started = await browser.get(SAML_LOGIN);
    expect(started.statusCode).toBe(302);
    expect(idp.readAuthnRequest(started.headers.location!).id).toMatch(/^_/);
  });

  it('publishes metadata the IdP imports, and signs in through the IdP’s own /sso and auto-post page', async () => {
    await setUp();
    const urls = samlSiteUrls(latchkey);
    const metadata = await browser.get('/accounts/saml/acme/metadata/');
    expect(metadata.statusCode).toBe(200);
    expect(metadata.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
    expect(idp.importSpMetadata(metadata.body)).toMatchObject({ entityId: 'http://testserver/accounts/saml/acme/metadata/', acsUrl: 'http://testserver/accounts/saml/acme/acs/', slsUrl: urls.sls });

    idp.signInAs(ADA);
    const { redirect, requestId } = await startSignIn(browser);
    expect(redirect.origin + redirect.pathname).toBe(idp.ssoUrl);
    const { action, finish } = await throughIdpSso(browser, redirect);
    expect(action).toBe(urls.acs);
    expect(finish?.headers.location).toBe('/');
    expect(await sessionUser()).toBe((await userOf('ada@acme.example')).id);
    expect(requestId).toMatch(/^_/);
  });

  it('signs its AuthnRequests and decrypts the assertions the IdP encrypts for it, both from its metadata', async () => {
    const own = createTestKeyPair('Latchkey test SP');
    const advanced = { authn_request_signed: true, want_assertion_encrypted: true, x509cert: own.certificate, private_key: own.privateKey };
    await setUp({}, { settings: { advanced } });
    const imported = idp.importSpMetadata((await browser.get('/accounts/saml/acme/metadata/')).body);
    expect(imported).toMatchObject({ authnRequestsSigned: true, signingCertificate: expect.stringContaining('BEGIN CERTIFICATE'), encryptionCertificate: expect.stringContaining('BEGIN CERTIFICATE') });
    idp.signInAs(ADA, { encryptAssertions: true });
    const { redirect } = await startSignIn(browser);
    // Signed with the default signature_algorithm, rsa-sha256; the IdP's /sso below checks the signature.
    expect(idp.readAuthnRequest(redirect)).toMatchObject({ signed: true, sigAlg: RSA_SHA256 });
    const { finish } = await throughIdpSso(browser, redirect);
    expect(finish?.headers.location).toBe('/');
    expect(await sessionUser()).toBe((await userOf('ada@acme.example')).id);

    // The same IdP, told to send the assertion in clear: refused, since the app wants it encrypted.
    idp.signInAs(ADA, { encryptAssertions: false });
    const stranger = browser.another();
    expect((await throughIdpSso(stranger, (await startSignIn(stranger)).redirect)).finish?.headers.location).toBe(ERROR_PAGE);
    expect(await sessionUser(stranger)).toBeFalsy();
  });

  it('signs its AuthnRequests with signature_algorithm rsa-sha512 when the settings say so', async () => {
    const own = createTestKeyPair('Latchkey test SP');
    await setUp({}, { settings: { advanced: { authn_request_signed: true, signature_algorithm: 'rsa-sha512', x509cert: own.certificate, private_key: own.privateKey } } });
    idp.importSpMetadata((await browser.get('/accounts/saml/acme/metadata/')).body);
    idp.signInAs(ADA);
    const { redirect } = await startSignIn(browser);
    expect(idp.readAuthnRequest(redirect)).toMatchObject({ signed: true, sigAlg: RSA_SHA512 });
    // The IdP verifies the SHA-512 signature with the certificate from our metadata, and answers.
    expect((await throughIdpSso(browser, redirect)).finish?.headers.location).toBe('/');
  });

  it('signs its metadata when it has a key: SHA-256 and rsa-sha256 by default, else the configured algorithms', async () => {
    const own = createTestKeyPair('Latchkey test SP');
    const stranger = createTestKeyPair('Someone else');
    const metadataSignature = async (advanced: Record<string, unknown>) => {
      await setUp({}, { settings: { advanced } });
      const xml = (await browser.get('/accounts/saml/acme/metadata/')).body;
      await browser.close();
      await latchkey.destroy();
      // Verified by the certificate the IdP administrator was given, never one the document carries.
      return { signature: readMetadataSignature(xml, own.certificate), byStranger: readMetadataSignature(xml, stranger.certificate), xml };
    };

    const unsignedApp = await metadataSignature({});
    expect(unsignedApp.signature).toBeUndefined();

    const byDefault = await metadataSignature({ x509cert: own.certificate, private_key: own.privateKey });
    expect(byDefault.signature).toEqual({ signatureAlgorithm: RSA_SHA256, digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256', verifies: true });
    expect(byDefault.byStranger?.verifies).toBe(false);
    // What the signature covers is what the SP serves: the Redirect SLS, and no promise to sign requests it does not sign.
    expect(idp.importSpMetadata(byDefault.xml)).toMatchObject({ slsUrl: 'http://testserver/accounts/saml/acme/sls/', authnRequestsSigned: false });

    const sha512 = await metadataSignature({ x509cert: own.certificate, private_key: own.privateKey, signature_algorithm: 'rsa-sha512', digest_algorithm: 'sha512' });
    expect(sha512.signature).toEqual({ signatureAlgorithm: RSA_SHA512, digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha512', verifies: true });
    const sha1 = await metadataSignature({ x509cert: own.certificate, private_key: own.privateKey, digest_algorithm: 'sha1', reject_deprecated_algorithm: false });
    expect(sha1.signature).toEqual({ signatureAlgorithm: RSA_SHA256, digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1', verifies: true });
    // Each site above was closed once read; afterEach closes this one.
    await setUp();
  });

  it('uses a configured sp.entity_id as its metadata entityID, its AuthnRequests’ Issuer and the only Audience it accepts', async () => {
    const entityId = 'https://sp.acme.example/saml';
    await setUp({}, { settings: { sp: { entity_id: entityId } } });
    const metadata = await browser.get('/accounts/saml/acme/metadata/');
    expect(idp.importSpMetadata(metadata.body)).toMatchObject({ entityId, acsUrl: samlSiteUrls(latchkey).acs });
    const { redirect } = await startSignIn(browser);
    expect(idp.readAuthnRequest(redirect).issuer).toBe(entityId);

    // The IdP's own /sso writes the imported entity id as the audience: accepted.
    idp.signInAs(ADA);
    expect((await throughIdpSso(browser, redirect)).finish?.headers.location).toBe('/');
    expect(await sessionUser()).toBe((await userOf('ada@acme.example')).id);
    // A response for the metadata URL, the entity id there would be without the setting: refused.
    const stranger = browser.another();
    expect((await signIn(ADA, stranger)).response.headers.location).toBe(ERROR_PAGE);
    expect(await sessionUser(stranger)).toBeFalsy();
    expect((await signInThroughIdp(latchkey, browser.another(), idp, ADA, { audience: entityId })).response.headers.location).toBe('/');
  });

  it('signs a person in end to end through a SAML app stored in the database, not in the settings', async () => {
    const own = createTestKeyPair('Latchkey test SP');
    await setUp({ SOCIALACCOUNT_PROVIDERS: {} });
    expect((await browser.get(SAML_LOGIN)).statusCode).toBe(404);
    const settings = { idp: { entity_id: idp.entityId, sso_url: idp.ssoUrl, x509cert: idp.keys.certificate }, advanced: { authn_request_signed: true, x509cert: own.certificate } };
    // As `latchkey socialapps add` or the admin stores it: the SP's key sealed as the app's secret.
    await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { provider: 'saml', providerId: idp.entityId, name: 'Acme (stored)', clientId: 'acme', key: '', settings, secret: own.privateKey }, CLIENT);
    expect((await browser.get('/accounts/login/')).body).toContain('Acme (stored)');

    expect(idp.importSpMetadata((await browser.get('/accounts/saml/acme/metadata/')).body)).toMatchObject({ authnRequestsSigned: true, signingCertificate: expect.stringContaining('BEGIN CERTIFICATE') });
    idp.signInAs(ADA);
    const { redirect } = await startSignIn(browser);
    expect(idp.readAuthnRequest(redirect).signed).toBe(true);
    expect((await throughIdpSso(browser, redirect)).finish?.headers.location).toBe('/');
    const ada = await userOf('ada@acme.example');
    expect(await sessionUser()).toBe(ada.id);
    expect(await accountsOf('ada@acme.example')).toMatchObject([{ provider: idp.entityId, uid: 'ada-at-acme' }]);
  });

  it('reads an IdP known only by its entity id and metadata URL, fetching the metadata once per metadata_cache_timeout', async () => {
    const metadataUrl = `http://127.0.0.1:${(metadataServer.address() as AddressInfo).port}/metadata`;
    await setUp({}, { settings: { idp: { sso_url: undefined, slo_url: undefined, x509cert: undefined, metadata_url: metadataUrl, metadata_cache_timeout: 600 } } });
    const before = metadataRequests;
    expect((await signIn(ADA)).response.headers.location).toBe('/');
    expect((await signIn(ADA, browser.another())).response.headers.location).toBe('/');
    expect(metadataRequests - before).toBe(1);
    latchkey.clock.advance(601 * 1000);
    expect((await signIn(ADA, browser.another())).response.headers.location).toBe('/');
    expect(metadataRequests - before).toBe(2);
  });

  it('signs in an IdP-initiated response when allowed, landing on its RelayState only when that is a path here', async () => {
    await setUp({}, { settings: { advanced: { reject_idp_initiated_sso: false } } });
    expect((await postToAcs(browser, responseFor(latchkey, idp, ADA, undefined), '/accounts/email/')).headers.location).toBe('/accounts/email/');
    expect(await sessionUser()).toBe((await userOf('ada@acme.example')).id);
    for (const relayState of ['https://evil.example/', '//evil.example/', 'javascript:alert(1)']) {
      const stranger = browser.another();
      expect((await postToAcs(stranger, responseFor(latchkey, idp, ADA, undefined), relayState)).headers.location, relayState).toBe('/');
    }
  });

  it('refuses an IdP-initiated response by default, signing nobody in', async () => {
    await setUp();
    expect((await postToAcs(browser, responseFor(latchkey, idp, ADA, undefined), '/accounts/email/')).headers.location).toBe(ERROR_PAGE);
    expect(await sessionUser()).toBeFalsy();
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('signs the browser out on a signed LogoutRequest and answers the IdP; refuses an unsigned one with 400', async () => {
    await setUp();
    await signIn(ADA);
    const { sls } = samlSiteUrls(latchkey);
    const signed = new URL(idp.logoutRequestUrl({ slsUrl: sls, nameId: 'ada-at-acme', now: latchkey.clock.now() }));
    const unsigned = new URL(signed);
    unsigned.searchParams.delete('Signature');
    unsigned.searchParams.delete('SigAlg');
    const refused = await browser.get(unsigned.pathname + unsigned.search);
    expect(refused.statusCode).toBe(400);
    expect(await sessionUser()).toBe((await userOf('ada@acme.example')).id);

    const answered = await browser.get(signed.pathname + signed.search);
    expect(answered.statusCode).toBe(302);
    const back = new URL(answered.headers.location!);
    expect(back.origin + back.pathname).toBe(idp.sloUrl);
    expect(back.searchParams.get('SAMLResponse')).toBeTruthy();
    expect(await sessionUser()).toBeFalsy();
  });

  it('takes a large signed response (hundreds of group values) that outgrows the pages’ form limit', async () => {
    await setUp();
    const groups = Array.from({ length: 600 }, (_, index) => `cn=group-${index},ou=groups,dc=acme,dc=example`);
    const { response } = await signIn({ ...ADA, attributes: { ...ADA.attributes, groups } });
    expect(response.headers.location).toBe('/');
    const [account] = await accountsOf('ada@acme.example');
    expect((account!.extraData.groups as string[]).length).toBe(600);
  });

  it('refuses a signed LogoutRequest meant for another SLS, a stale one, or one used before; signs out only an account of this IdP', async () => {
    await setUp();
    await signIn(ADA);
    const { sls } = samlSiteUrls(latchkey);
    const at = (url: string) => new URL(url).pathname + new URL(url).search;
    const ada = (await userOf('ada@acme.example')).id;

    // Signed by the IdP, but for another service provider: its signature covers only the query, so it could be brought here.
    const elsewhere = idp.logoutRequestUrl({ slsUrl: 'https://other-sp.example/saml/sls/', nameId: 'ada-at-acme', now: latchkey.clock.now() });
    expect((await browser.get(at(sls) + new URL(elsewhere).search)).statusCode).toBe(400);
    // Issued longer ago than the allowed clock drift (300 s): a logout link found in a history or a log.
    const stale = idp.logoutRequestUrl({ slsUrl: sls, nameId: 'ada-at-acme', now: new Date(latchkey.clock.now().getTime() - 301_000) });
    expect((await browser.get(at(stale))).statusCode).toBe(400);
    expect(await sessionUser()).toBe(ada);

    const fresh = idp.logoutRequestUrl({ slsUrl: sls, nameId: 'ada-at-acme', now: latchkey.clock.now() });
    expect((await browser.get(at(fresh))).statusCode).toBe(302);
    expect(await sessionUser()).toBeFalsy();
    // The same request again, once Ada has signed in once more: refused, and she stays signed in.
    await signIn(ADA);
    expect((await browser.get(at(fresh))).statusCode).toBe(400);
    expect(await sessionUser()).toBe(ada);

    // Someone signed in with a password only: the IdP speaks for its own sessions, not for this one.
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: 'a long and good password 1', emailVerified: true });
    const local = browser.another();
    expect((await local.post('/accounts/login/', { login: 'grace', password: 'a long and good password 1' })).headers.location).toBe('/');
    const forGrace = idp.logoutRequestUrl({ slsUrl: sls, nameId: 'grace@example.com', now: latchkey.clock.now() });
    expect((await local.get(at(forGrace))).statusCode).toBe(302);
    expect(await sessionUserOf(latchkey, local)).toBe(grace.id);
  });

  it('with signup closed refuses new people, unless the project’s adapter opens signup for this IdP', async () => {
    await setUp({ ACCOUNT_ALLOW_REGISTRATION: false });
    const refused = (await signIn(ADA)).response;
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('sign up is currently closed');
    expect(await latchkey.deps.store.users.count()).toBe(0);

    const entityId = idp.entityId;
    latchkey.deps.socialAdapter = new (class extends SocialAccountAdapter {
      override isOpenForSignup(login: SocialLogin): boolean {
        return login.provider === entityId || this.settings.ACCOUNT_ALLOW_REGISTRATION;
      }
    })(latchkey.settings);
    expect((await signIn(ADA, browser.another())).response.headers.location).toBe('/');
    expect(await accountsOf('ada@acme.example')).toMatchObject([{ provider: entityId, extraData: { department: ['Engineering', 'Research'] } }]);
  });
});
