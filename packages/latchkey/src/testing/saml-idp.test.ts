/**
 * Proves the test identity provider speaks SAML as a real service provider expects it, by checking
 * its output with @node-saml/node-saml directly (never with Latchkey's own SAML code, which is what
 * this identity provider exists to test). node-saml reads the wall clock, so Date is frozen at NOW.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { generateServiceProviderMetadata, SAML, SamlStatusError, type SamlConfig } from '@node-saml/node-saml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestSamlIdp, type SamlResponseOptions, type TestSamlIdp } from './saml-idp.js';
import { certificateBody, certificatePem, createTestKeyPair } from './saml-keys.js';
import { childElement, descendants, parseXml, SAML_BINDING, SAML_NS } from './saml-xml.js';

const NOW = new Date('2031-03-14T09:26:53.000Z');
const SP_ENTITY_ID = 'https://sp.example.test/accounts/saml/acme/metadata/';
const ACS_URL = 'https://sp.example.test/accounts/saml/acme/acs/';
const SLS_URL = 'https://sp.example.test/accounts/saml/acme/sls/';
const ALICE = {
  nameId: 'alice@example.com',
  sessionIndex: '_session-1',
  attributes: { 'urn:oid:0.9.2342.19200300.100.1.3': 'alice@example.com', groups: ['staff', 'R&D <lab>'] },
};

let idp: TestSamlIdp;
const spKeys = createTestKeyPair('sp.example.test');

beforeAll(async () => {
  idp = await startTestSamlIdp({ now: () => NOW });
});
afterAll(async () => {
  await idp.close();
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

/** A node-saml service provider trusting the identity provider's certificate. */
function serviceProvider(overrides: Partial<SamlConfig> = {}): SAML {
  return new SAML({
    idpCert: idp.keys.certificate,
    issuer: SP_ENTITY_ID,
    audience: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    entryPoint: idp.ssoUrl,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    ...overrides,
  });
}

function response(overrides: Partial<SamlResponseOptions> = {}): string {
  return idp.responseBase64({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: ALICE, now: NOW, ...overrides });
}

describe('test key pairs', () => {
  it('makes a self-signed certificate over the key, valid from long before to long after any test', () => {
    const keys = createTestKeyPair('keys.example.test');
    const certificate = new X509Certificate(keys.certificate);
    expect(certificate.subject).toBe('CN=keys.example.test');
    expect(certificate.checkPrivateKey(createPrivateKey(keys.privateKey))).toBe(true);
    expect(certificate.verify(certificate.publicKey)).toBe(true);
    expect(new Date(certificate.validFrom).getUTCFullYear()).toBe(2000);
    expect(new Date(certificate.validTo).getUTCFullYear()).toBe(2099);
    expect(createTestKeyPair('keys.example.test').privateKey).not.toBe(keys.privateKey);
  });

  it('gives the certificate body as metadata carries it, and reads it back', () => {
    const body = certificateBody(spKeys.certificate);
    expect(body).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(new X509Certificate(certificatePem(`\n  ${body.slice(0, 40)}\n${body.slice(40)}  `)).raw).toEqual(new X509Certificate(spKeys.certificate).raw);
  });
});

describe('responses node-saml accepts', () => {
  it('accepts a response with a signed assertion, with the person, the session and the attributes', async () => {
    const { profile } = await serviceProvider().validatePostResponseAsync({ SAMLResponse: response() });
    expect(profile).toMatchObject({
      issuer: idp.entityId,
      nameID: 'alice@example.com',
      nameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      sessionIndex: '_session-1',
      attributes: { 'urn:oid:0.9.2342.19200300.100.1.3': 'alice@example.com', groups: ['staff', 'R&D <lab>'] },
    });
  });

  it('writes Destination, Recipient, audience and the five-minute window around now; no InResponseTo when unsolicited', () => {
    const document = parseXml(idp.responseXml({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: ALICE, now: NOW }));
    const root = document.documentElement!;
    expect(root.getAttribute('Destination')).toBe(ACS_URL);
    expect(root.hasAttribute('InResponseTo')).toBe(false);
    const confirmation = descendants(document, SAML_NS.assertion, 'SubjectConfirmationData')[0]!;
    expect(confirmation.getAttribute('Recipient')).toBe(ACS_URL);
    expect(confirmation.hasAttribute('InResponseTo')).toBe(false);
    const conditions = descendants(document, SAML_NS.assertion, 'Conditions')[0]!;
    expect(conditions.getAttribute('NotBefore')).toBe('2031-03-14T09:21:53.000Z');
    expect(conditions.getAttribute('NotOnOrAfter')).toBe('2031-03-14T09:31:53.000Z');
    expect(descendants(document, SAML_NS.assertion, 'Audience')[0]!.textContent).toBe(SP_ENTITY_ID);
  });

  it('places each signature right after its Issuer, and signs what was asked', () => {
    const document = parseXml(idp.responseXml({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: ALICE, now: NOW, sign: 'both' }));
    const root = document.documentElement!;
    const assertion = childElement(root, SAML_NS.assertion, 'Assertion')!;
    for (const element of [root, assertion]) {
      const issuer = childElement(element, SAML_NS.assertion, 'Issuer')!;
      const signature = childElement(element, SAML_NS.dsig, 'Signature')!;
      expect(issuer.nextSibling).toBe(signature);
      expect(descendants(signature, SAML_NS.dsig, 'Reference')[0]!.getAttribute('URI')).toBe(`#${element.getAttribute('ID')!}`);
    }
    const none = idp.responseXml({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: ALICE, now: NOW, sign: 'none' });
    expect(descendants(parseXml(none), SAML_NS.dsig, 'Signature')).toHaveLength(0);
  });

  it('signs the response, or both, as node-saml then requires', async () => {
    const responseOnly = serviceProvider({ wantAuthnResponseSigned: true, wantAssertionsSigned: false });
    await expect(responseOnly.validatePostResponseAsync({ SAMLResponse: response({ sign: 'response' }) })).resolves.toMatchObject({ profile: { nameID: 'alice@example.com' } });
    await expect(responseOnly.validatePostResponseAsync({ SAMLResponse: response({ sign: 'assertion' }) })).rejects.toThrow(/Invalid document signature/);
    const bothRequired = serviceProvider({ wantAuthnResponseSigned: true, wantAssertionsSigned: true });
    await expect(bothRequired.validatePostResponseAsync({ SAMLResponse: response({ sign: 'both' }) })).resolves.toMatchObject({ profile: { nameID: 'alice@example.com' } });
    await expect(serviceProvider().validatePostResponseAsync({ SAMLResponse: response({ sign: 'none' }) })).rejects.toThrow(/Invalid signature/);
  });

  it("signs with SHA-1 when asked (node-saml accepts it: refusing SHA-1 is the service provider's own check)", async () => {
    const xml = idp.responseXml({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: ALICE, now: NOW, algorithm: 'sha1' });
    const document = parseXml(xml);
    expect(descendants(document, SAML_NS.dsig, 'SignatureMethod')[0]!.getAttribute('Algorithm')).toBe('http://www.w3.org/2000/09/xmldsig#rsa-sha1');
    expect(descendants(document, SAML_NS.dsig, 'DigestMethod')[0]!.getAttribute('Algorithm')).toBe('http://www.w3.org/2000/09/xmldsig#sha1');
    await expect(serviceProvider().validatePostResponseAsync({ SAMLResponse: Buffer.from(xml).toString('base64') })).resolves.toMatchObject({ profile: { nameID: 'alice@example.com' } });
  });

  it('escapes the person and the attributes, which come back exactly', async () => {
    const person = { nameId: `o'brien"<&>@example.com`, attributes: { 'display name': `</saml:AttributeValue><x a="1">` } };
    const { profile } = await serviceProvider().validatePostResponseAsync({ SAMLResponse: response({ person }) });
    expect(profile?.nameID).toBe(person.nameId);
    expect(profile?.attributes).toEqual(person.attributes);
  });

  it('takes overrides: issuer, IDs, recipient, no Destination, unspecified NameID format', () => {
    const xml = idp.responseXml({
      acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: { nameId: 'u-42' }, now: NOW, issuer: 'https://other-idp.test',
      responseId: '_response-1', assertionId: '_assertion-1', recipient: 'https://elsewhere.test/acs', destination: null,
    });
    const document = parseXml(xml);
    const root = document.documentElement!;
    expect(root.getAttribute('ID')).toBe('_response-1');
    expect(root.hasAttribute('Destination')).toBe(false);
    expect(descendants(document, SAML_NS.assertion, 'Assertion')[0]!.getAttribute('ID')).toBe('_assertion-1');
    expect(descendants(document, SAML_NS.assertion, 'Issuer').map((issuer) => issuer.textContent)).toEqual(['https://other-idp.test', 'https://other-idp.test']);
    expect(descendants(document, SAML_NS.assertion, 'SubjectConfirmationData')[0]!.getAttribute('Recipient')).toBe('https://elsewhere.test/acs');
    expect(descendants(document, SAML_NS.assertion, 'NameID')[0]!.getAttribute('Format')).toBe('urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified');
  });
});

describe('responses node-saml refuses', () => {
  it('refuses a response signed by another key', async () => {
    const signingKey = createTestKeyPair('impostor.example.test');
    await expect(serviceProvider().validatePostResponseAsync({ SAMLResponse: response({ signingKey }) })).rejects.toThrow(/Invalid signature/);
  });

  it('refuses an expired assertion and one for another audience', async () => {
    const tenMinutesAgo = new Date(NOW.getTime() - 10 * 60 * 1000);
    await expect(serviceProvider().validatePostResponseAsync({ SAMLResponse: response({ now: tenMinutesAgo }) })).rejects.toThrow(/expired/i);
    await expect(serviceProvider().validatePostResponseAsync({ SAMLResponse: response({ audience: 'https://other-sp.test' }) })).rejects.toThrow(/audience/i);
  });

  it('reports a failed authentication as the status error it is, with no assertion', async () => {
    const xml = idp.responseXml({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: ALICE, now: NOW, status: 'authn_failed' });
    expect(descendants(parseXml(xml), SAML_NS.assertion, 'Assertion')).toHaveLength(0);
    const refusal: unknown = await serviceProvider().validatePostResponseAsync({ SAMLResponse: Buffer.from(xml).toString('base64') }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SamlStatusError);
    expect((refusal as SamlStatusError).message).toMatch(/Responder error/);
    expect((refusal as SamlStatusError).xmlStatus).toContain('urn:oasis:names:tc:SAML:2.0:status:AuthnFailed');
  });
});

describe('encrypted assertions', () => {
  it('encrypts the signed assertion for the service provider, which decrypts it with its key', async () => {
    const xml = idp.responseXml({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: ALICE, now: NOW, encryptFor: spKeys.certificate });
    expect(descendants(parseXml(xml), SAML_NS.assertion, 'EncryptedAssertion')).toHaveLength(1);
    expect(xml).not.toContain('alice@example.com');
    const { profile } = await serviceProvider({ decryptionPvk: spKeys.privateKey }).validatePostResponseAsync({ SAMLResponse: Buffer.from(xml).toString('base64') });
    expect(profile).toMatchObject({ nameID: 'alice@example.com', sessionIndex: '_session-1' });
  });

  it('cannot be read with another key, nor without one', async () => {
    const encrypted = response({ encryptFor: spKeys.certificate, sign: 'both' });
    const stranger = createTestKeyPair('stranger.example.test');
    await expect(serviceProvider({ decryptionPvk: stranger.privateKey }).validatePostResponseAsync({ SAMLResponse: encrypted })).rejects.toThrow();
    await expect(serviceProvider().validatePostResponseAsync({ SAMLResponse: encrypted })).rejects.toThrow(/decryption key/);
    await expect(serviceProvider({ decryptionPvk: spKeys.privateKey, wantAuthnResponseSigned: true }).validatePostResponseAsync({ SAMLResponse: encrypted })).resolves.toMatchObject({
      profile: { nameID: 'alice@example.com' },
    });
  });
});

describe('metadata', () => {
  it('publishes its entity ID, signing certificate, SSO (Redirect and POST) and SLO (Redirect), at /metadata too', async () => {
    const served = await fetch(idp.metadataUrl);
    expect(served.status).toBe(200);
    const xml = await served.text();
    expect(xml).toBe(idp.metadataXml());
    const document = parseXml(xml);
    expect(document.documentElement!.getAttribute('entityID')).toBe(idp.entityId);
    expect(idp.entityId).toBe(`${idp.origin}/metadata`);
    const key = descendants(document, SAML_NS.metadata, 'KeyDescriptor')[0]!;
    expect(key.getAttribute('use')).toBe('signing');
    expect(descendants(key, SAML_NS.dsig, 'X509Certificate')[0]!.textContent).toBe(certificateBody(idp.keys.certificate));
    const endpoints = (name: string): string[][] =>
      descendants(document, SAML_NS.metadata, name).map((endpoint) => [endpoint.getAttribute('Binding')!, endpoint.getAttribute('Location')!]);
    expect(endpoints('SingleSignOnService')).toEqual([[SAML_BINDING.redirect, idp.ssoUrl], [SAML_BINDING.post, idp.ssoUrl]]);
    expect(endpoints('SingleLogoutService')).toEqual([[SAML_BINDING.redirect, idp.sloUrl]]);
  });

  it("imports node-saml's service provider metadata as an administrator would", () => {
    const metadata = generateServiceProviderMetadata({
      issuer: SP_ENTITY_ID, callbackUrl: ACS_URL, logoutCallbackUrl: SLS_URL,
      privateKey: spKeys.privateKey, publicCerts: spKeys.certificate, decryptionPvk: spKeys.privateKey, decryptionCert: spKeys.certificate,
    });
    const imported = idp.importSpMetadata(metadata);
    expect(imported).toMatchObject({ entityId: SP_ENTITY_ID, acsUrl: ACS_URL, slsUrl: SLS_URL, authnRequestsSigned: true });
    expect(certificateBody(imported.signingCertificate!)).toBe(certificateBody(spKeys.certificate));
    expect(certificateBody(imported.encryptionCertificate!)).toBe(certificateBody(spKeys.certificate));
    const plain = idp.importSpMetadata(generateServiceProviderMetadata({ issuer: SP_ENTITY_ID, callbackUrl: ACS_URL }));
    expect(plain).toEqual({ entityId: SP_ENTITY_ID, acsUrl: ACS_URL, authnRequestsSigned: false });
    expect(() => idp.importSpMetadata(idp.metadataXml())).toThrow(/SPSSODescriptor/);
  });
});
