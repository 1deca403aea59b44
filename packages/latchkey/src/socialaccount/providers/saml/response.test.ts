/**
 * The service provider's reading of a SAML Response, without HTTP: hand-made responses, honest and
 * hostile, given to verifySamlResponse with the expectations the ACS would pass. Each refusal is a
 * ProviderError whose message names the check that fired, so a test proves the right check
 * refused it, not an accident elsewhere.
 */
import { describe, expect, it } from 'vitest';
import { withCommentInNameId, XSW_ATTACKS, unsigned } from '../../../testing/saml-attacks.js';
import { ManualClock } from '../../../core/clock.js';
import { certificateBody, createTestKeyPair, type TestKeyPair } from '../../../testing/saml-keys.js';
import { buildSamlResponse, type SamlResponseOptions } from '../../../testing/saml-response.js';
import { ProviderError } from '../provider.js';
import { idpEndpointsSource, type IdpEndpoints } from './idp-metadata.js';
import { claimedRequestId, verifySamlResponse, type VerifiedAssertion } from './response.js';
import { samlOptions } from './settings.js';

const IDP_ENTITY = 'https://idp.example/metadata';
const ACS = 'http://testserver/accounts/saml/acme/acs/';
const SP_ENTITY = 'http://testserver/accounts/saml/acme/metadata/';
const REQUEST_ID = '_sign-in-state';
const NOW = new Date('2030-06-01T12:00:00.000Z');
const MINUTE = 60_000;
const ALICE = { nameId: 'alice@example.com', attributes: { 'urn:oid:0.9.2342.19200300.100.1.3': 'alice@example.com' } };
const EVIL = 'mallory@evil.test';

const idpKeys = createTestKeyPair('Unit test IdP');
const spKeys = createTestKeyPair('Unit test SP');
const strangerKeys = createTestKeyPair('Someone else');
const idp: IdpEndpoints = { ssoUrl: new URL('https://idp.example/sso'), certificates: [certificateBody(idpKeys.certificate)] };

function responseXml(overrides: Partial<SamlResponseOptions> = {}): string {
  const options: SamlResponseOptions = { acsUrl: ACS, audience: SP_ENTITY, person: ALICE, now: NOW, inResponseTo: REQUEST_ID, ...overrides };
  return buildSamlResponse(options, { issuer: IDP_ENTITY, signingKey: idpKeys });
}

interface Check {
  advanced?: Record<string, unknown>;
  /** The request this browser sent; null for none (an unsolicited response expected). */
  requestId?: string | null;
  now?: Date;
  /** The SAMLResponse field as posted: the XML's base64 unless given. */
  raw?: string;
}

function verify(xml: string, check: Check = {}): Promise<VerifiedAssertion> {
  // A variable, not a literal: the app's fields beyond id and settings (its secret) are read only by some versions.
  const app = { id: 'acme', settings: { idp: { entity_id: IDP_ENTITY, sso_url: 'https://idp.example/sso', x509cert: idpKeys.certificate }, advanced: check.advanced ?? {} }, secret: '' };
  const requestId = check.requestId === null ? undefined : (check.requestId ?? REQUEST_ID);
  return verifySamlResponse('acme', samlOptions(app), idp, check.raw ?? Buffer.from(xml, 'utf8').toString('base64'), { spEntityId: SP_ENTITY, acsUrl: ACS, requestId, now: check.now ?? NOW });
}

/** The refusal's message; fails the test when the response is accepted or fails some other way than a ProviderError. */
async function refusal(xml: string, check: Check = {}): Promise<string> {
  const outcome = await verify(xml, check).then(
    (verified) => ({ verified }),
    (error: unknown) => ({ error }),
  );
  if ('verified' in outcome) throw new Error(`accepted, as ${outcome.verified.person.nameId}`);
  expect(outcome.error).toBeInstanceOf(ProviderError);
  expect((outcome.error as ProviderError).reason).toBe('failed');
  return (outcome.error as ProviderError).message;
}

/** A rewrite of one attribute's value in the serialized XML, which must be there. */
function replaced(xml: string, from: string, to: string): string {
  expect(xml).toContain(from);
  return xml.replace(from, to);
}

describe('claimedRequestId', () => {
  const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

  it("reads the Response's InResponseTo, and nothing from an unsolicited one", () => {
    expect(claimedRequestId(base64(responseXml()))).toBe(REQUEST_ID);
    expect(claimedRequestId(base64(responseXml({ inResponseTo: undefined })))).toBeUndefined();
  });

  it('claims nothing for what is not a SAML Response', () => {
    const notResponses = [
      'not base64 at all!',
      base64('plain text, no XML'),
      base64(`<!DOCTYPE r [<!ENTITY x "y">]>${responseXml()}`),
      base64(`<Response xmlns="urn:example" InResponseTo="${REQUEST_ID}"/>`),
      base64(`<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" InResponseTo="${REQUEST_ID}"/>`),
      base64(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" InResponseTo="${REQUEST_ID}">`),
    ];
    for (const raw of notResponses) expect(claimedRequestId(raw), raw).toBeUndefined();
  });
});

describe('verifySamlResponse', () => {
  it('reads the signed assertion: the NameID, its format, the attributes, its id and how long it may be used', async () => {
    const verified = await verify(responseXml({ assertionId: '_assertion-1', person: { ...ALICE, sessionIndex: '_session-1' } }));
    expect(verified.person).toEqual({ nameId: 'alice@example.com', nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', attributes: { 'urn:oid:0.9.2342.19200300.100.1.3': ['alice@example.com'] } });
    expect(verified.assertionId).toBe('_assertion-1');
    // Whom the IdP's session is for, as its single logout will name it.
    expect(verified.subject).toEqual({ nameId: 'alice@example.com', format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress', sessionIndex: '_session-1' });
    // Five minutes of validity, and the 300 s another clock may be behind ours.
    expect(verified.usableUntil).toEqual(new Date(NOW.getTime() + 5 * MINUTE + 300_000));
  });

  it('accepts a signed Response, a signed assertion, or both', async () => {
    for (const sign of ['response', 'assertion', 'both'] as const) {
      expect((await verify(responseXml({ sign }))).person.nameId, sign).toBe('alice@example.com');
    }
  });

  it('refuses every signature-wrapping variant, and never reads the evil NameID', async () => {
    for (const attack of XSW_ATTACKS) {
      const xml = attack.apply(responseXml({ sign: attack.needs }), EVIL);
      const message = await refusal(xml);
      expect(message, attack.name).not.toContain(EVIL);
    }
  });

  it('refuses an unsigned response, and one signed by another key', async () => {
    expect(await refusal(unsigned(responseXml({ sign: 'both' })))).toMatch(/refused/);
    expect(await refusal(responseXml({ sign: 'none' }))).toMatch(/refused/);
    for (const sign of ['assertion', 'response', 'both'] as const) {
      expect(await refusal(responseXml({ sign, signingKey: strangerKeys })), sign).toMatch(/refused/);
    }
  });

  it('accepts a response signed by any of several IdP certificates (a key rotation), and refuses one signed by a third key', async () => {
    const nextKeys = createTestKeyPair('Unit test IdP, next key');
    const settings = { idp: { entity_id: IDP_ENTITY, sso_url: 'https://idp.example/sso', x509cert: [idpKeys.certificate, nextKeys.certificate] } };
    const options = samlOptions({ id: 'acme', settings, secret: '' });
    // The endpoints as the provider reads them from these settings, both certificates included.
    const endpoints = await idpEndpointsSource('acme', options.idp, { timeoutSeconds: 5 }, new ManualClock(NOW))();
    expect(endpoints.certificates).toHaveLength(2);
    const verifyWith = (signingKey: TestKeyPair, sign: SamlResponseOptions['sign']) =>
      verifySamlResponse('acme', options, endpoints, Buffer.from(responseXml({ signingKey, sign }), 'utf8').toString('base64'), { spEntityId: SP_ENTITY, acsUrl: ACS, requestId: REQUEST_ID, now: NOW });
    for (const sign of ['assertion', 'response', 'both'] as const) {
      expect((await verifyWith(idpKeys, sign)).person.nameId, `old key, ${sign}`).toBe('alice@example.com');
      expect((await verifyWith(nextKeys, sign)).person.nameId, `new key, ${sign}`).toBe('alice@example.com');
      const refused = await verifyWith(strangerKeys, sign).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, `third key, ${sign}`).toBeInstanceOf(ProviderError);
      expect((refused as ProviderError).message).toMatch(/refused/);
    }
  });

  it("reads a NameID with a comment inside as its whole text, which the signature covers", async () => {
    const xml = withCommentInNameId(responseXml({ person: { nameId: 'alice@example.com.evil.test' } }), 'alice@example.com'.length);
    expect(xml).toContain('alice@example.com<!---->.evil.test');
    expect((await verify(xml)).person.nameId).toBe('alice@example.com.evil.test');
  });

  it('refuses a response to another request, an unsolicited one where a request was sent, and an answer where none was', async () => {
    expect(await refusal(responseXml({ inResponseTo: '_another-browser' }))).toContain('answers another request');
    expect(await refusal(responseXml({ inResponseTo: undefined }))).toContain('answers another request');
    expect(await refusal(responseXml(), { requestId: null })).toContain('answers another request');
    // The Response (unsigned) says ours, the signed assertion another: the assertion counts.
    const mixed = replaced(responseXml({ inResponseTo: '_another-browser' }), 'InResponseTo="_another-browser">', `InResponseTo="${REQUEST_ID}">`);
    expect(await refusal(mixed)).toMatch(/another request|InResponseTo/);
    // A browser's SP-initiated response stripped of the Response's InResponseTo, passed off as unsolicited.
    const stripped = replaced(responseXml(), ` InResponseTo="${REQUEST_ID}">`, '>');
    expect(claimedRequestId(Buffer.from(stripped, 'utf8').toString('base64'))).toBeUndefined();
    expect(await refusal(stripped, { requestId: null })).toContain('answers another request');
  });

  it('refuses a response for another audience, Destination, Recipient or Issuer', async () => {
    expect(await refusal(responseXml({ audience: 'https://other-sp.example/metadata/' }))).toMatch(/audience/i);
    expect(await refusal(responseXml({ destination: 'https://other-sp.example/acs/' }))).toContain('Destination');
    expect(await refusal(responseXml({ destination: '' }))).toContain('Destination');
    expect(await refusal(responseXml({ recipient: 'https://other-sp.example/acs/' }))).toContain('Recipient');
    expect(await refusal(responseXml({ issuer: 'https://other-idp.example/metadata' }))).toContain('issued by another IdP');
    // Without a Destination (it is optional when the assertion is signed) the Recipient still binds it to us.
    expect((await verify(responseXml({ destination: null }))).person.nameId).toBe('alice@example.com');
  });

  it('refuses an expired or not-yet-valid assertion on the clock it is given, allowing the configured drift', async () => {
    const xml = responseXml();
    const at = (offset: number) => new Date(NOW.getTime() + offset);
    // Valid for five minutes either side of NOW, and 300 s of drift beyond that.
    expect((await verify(xml, { now: at(5 * MINUTE + 299_000) })).person.nameId).toBe('alice@example.com');
    expect((await verify(xml, { now: at(-5 * MINUTE - 300_000) })).person.nameId).toBe('alice@example.com');
    expect(await refusal(xml, { now: at(5 * MINUTE + 300_000) })).toContain('has expired');
    expect(await refusal(xml, { now: at(-5 * MINUTE - 301_000) })).toContain('not valid yet');
    expect(await refusal(xml, { now: at(5 * MINUTE + 1), advanced: { allowed_clock_drift: 0 } })).toContain('has expired');
    // The subject confirmation's own window counts too.
    expect(await refusal(responseXml({ subjectNotOnOrAfter: at(-6 * MINUTE) }))).toContain('subject confirmation has expired');
  });

  describe('an encrypted assertion', () => {
    const encryption = { x509cert: spKeys.certificate, private_key: spKeys.privateKey };

    it('is decrypted with our key, RSA-OAEP key transport and all (its SHA-1 digest is no signature\'s)', async () => {
      const encrypted = responseXml({ encryptFor: spKeys.certificate });
      expect(encrypted).toContain('<ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/></xenc:EncryptionMethod>');
      expect((await verify(encrypted, { advanced: encryption })).person.nameId).toBe('alice@example.com');
      expect((await verify(encrypted, { advanced: { ...encryption, want_assertion_encrypted: true } })).person.nameId).toBe('alice@example.com');
    });

    it('is refused when encrypted for another key, or when we have no key; a plain one is refused when encryption is wanted', async () => {
      // SHA-1 allowed, so that the key is the only thing wrong with these.
      const lenient = { reject_deprecated_algorithm: false };
      expect(await refusal(responseXml({ encryptFor: strangerKeys.certificate }), { advanced: { ...encryption, ...lenient } })).toMatch(/was refused: |cannot be decrypted with our key/);
      expect(await refusal(responseXml({ encryptFor: spKeys.certificate }), { advanced: lenient })).toMatch(/was refused: /);
      expect(await refusal(responseXml(), { advanced: { ...encryption, want_assertion_encrypted: true } })).toContain('not encrypted');
    });

    it('is held to the signature algorithms too: SHA-1 inside it is refused by default', async () => {
      // rsa-oaep-mgf1p's DigestMethod is optional (SHA-1 when absent): without it nothing outside the encryption says SHA-1.
      const xml = replaced(responseXml({ encryptFor: spKeys.certificate, algorithm: 'sha1' }), '<ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/></xenc:EncryptionMethod>', '</xenc:EncryptionMethod>');
      expect(await refusal(xml, { advanced: encryption })).toMatch(/signature algorithm "http:\/\/www.w3.org\/2000\/09\/xmldsig#rsa-sha1"|digest algorithm/);
    });
  });

  it('refuses SHA-1 unless reject_deprecated_algorithm is false, and any non-RSA signature method', async () => {
    const sha1 = responseXml({ algorithm: 'sha1' });
    expect(await refusal(sha1)).toContain('is not accepted');
    expect((await verify(sha1, { advanced: { reject_deprecated_algorithm: false } })).person.nameId).toBe('alice@example.com');
    const hmac = replaced(responseXml(), 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', 'http://www.w3.org/2001/04/xmldsig-more#hmac-sha256');
    expect(await refusal(hmac, { advanced: { reject_deprecated_algorithm: false } })).toContain('signature algorithm');
  });

  it('holds the IdP to want_message_signed and want_assertion_signed', async () => {
    expect(await refusal(responseXml({ sign: 'assertion' }), { advanced: { want_message_signed: true } })).toMatch(/refused/);
    expect(await refusal(responseXml({ sign: 'response' }), { advanced: { want_assertion_signed: true } })).toMatch(/refused/);
    expect((await verify(responseXml({ sign: 'both' }), { advanced: { want_message_signed: true, want_assertion_signed: true } })).person.nameId).toBe('alice@example.com');
  });

  it('refuses a response whose status is not Success even when its assertion is validly signed, whichever part the IdP signed', async () => {
    const statuses = { responder: 'Responder', requester: 'Requester', authn_failed: 'Responder' } as const;
    for (const sign of ['assertion', 'response', 'both'] as const) {
      for (const [status, topLevel] of Object.entries(statuses) as [keyof typeof statuses, string][]) {
        const message = await refusal(responseXml({ status, sign, assertionDespiteStatus: true }));
        expect(message, `${status}, ${sign} signed`).toContain(`the IdP's status is urn:oasis:names:tc:SAML:2.0:status:${topLevel}`);
      }
      expect((await verify(responseXml({ sign }))).person.nameId, `success, ${sign} signed`).toBe('alice@example.com');
    }
    // A Response without a Status, or with two, says nothing that can be trusted as a success.
    const success = '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>';
    expect(await refusal(replaced(responseXml(), success, ''))).toContain("the IdP's status is missing");
    expect(await refusal(replaced(responseXml(), success, success + success))).toContain("the IdP's status is missing");
  });

  it('refuses a failed authentication, and text that is not a SAML Response, clearly', async () => {
    expect(await refusal(responseXml({ status: 'authn_failed' }))).toContain("the IdP's status is urn:oasis:names:tc:SAML:2.0:status:Responder (urn:oasis:names:tc:SAML:2.0:status:AuthnFailed)");
    const notResponses: Check[] = [
      { raw: 'not base64 at all!' },
      { raw: Buffer.from('plain text', 'utf8').toString('base64') },
      { raw: Buffer.from(`<!DOCTYPE r [<!ENTITY x "y">]>${responseXml()}`, 'utf8').toString('base64') },
      { raw: Buffer.from(`${responseXml()}${' '.repeat(600 * 1024)}`, 'utf8').toString('base64') },
    ];
    for (const check of notResponses) expect(await refusal('', check)).toContain('is not a SAML Response');
  });
});
