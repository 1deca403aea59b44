/**
 * Reading an IdP's answer to a sign-in (a SAML Response, HTTP-POST binding). node-saml verifies
 * the XML signatures, reads only what they cover (so a wrapped, unsigned assertion is never
 * read), decrypts an encrypted assertion and checks the audience. What it leaves to its callers is
 * checked here, as python3-saml's strict mode does and allauth relies on (SAML 2.0 Profiles §4.1.4):
 * - the status: Success, before any assertion is read (node-saml looks at the status only when the
 *   response holds no assertion, so a failure that carries a signed one would sign someone in);
 * - the algorithms: SHA-1 refused unless the app allows it, and only RSA signatures at all (an
 *   HMAC "signed" with the IdP's public certificate would verify for anyone who has it);
 * - Response@Destination and SubjectConfirmationData@Recipient: our ACS URL, so a response meant
 *   for another service provider trusting the same IdP cannot be replayed here;
 * - the Issuer: the configured IdP, in the response (when named) and in the signed assertion;
 * - InResponseTo: the request this browser sent, or none at all for an unsolicited response;
 * - the validity windows against Latchkey's clock, with the app's allowed clock drift.
 * The replay cache of assertion ids is the flow's (flows/saml-login.ts): it needs the store.
 */
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
import { decryptXml } from '@node-saml/node-saml/lib/xml.js';
import { XMLSerializer, type Element } from '@xmldom/xmldom';
import type { SamlSubject } from '../../model.js';
import { ProviderError } from '../provider.js';
import type { AssertedPerson } from './attributes.js';
import type { IdpEndpoints } from './idp-metadata.js';
import type { SamlOptions } from './settings.js';
import { attributeOf, children, descendants, onlyChild, parseXml, readNameId, SAML_ASSERTION, SAML_PROTOCOL, textOf, XML_DSIG } from './xml.js';

const RSA_SIGNATURES: Readonly<Record<string, 'modern' | 'deprecated'>> = {
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': 'modern',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': 'modern',
  'http://www.w3.org/2000/09/xmldsig#rsa-sha1': 'deprecated',
};
const DIGESTS: Readonly<Record<string, 'modern' | 'deprecated'>> = {
  'http://www.w3.org/2001/04/xmlenc#sha256': 'modern',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'modern',
  'http://www.w3.org/2000/09/xmldsig#sha1': 'deprecated',
};
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

/** What the service provider checks a response against. */
export interface ResponseExpectations {
  spEntityId: string;
  acsUrl: string;
  /** The AuthnRequest this browser sent; undefined for an unsolicited (IdP-initiated) response. */
  requestId: string | undefined;
  now: Date;
}

/** A verified assertion: who, in which of the IdP's sessions, and what the replay cache needs. */
export interface VerifiedAssertion {
  person: AssertedPerson;
  subject: SamlSubject;
  assertionId: string;
  /** The latest instant the assertion may be used: the replay cache keeps its id until then. */
  usableUntil: Date;
}

/** The Response element of a base64 SAMLResponse, unverified; undefined when it is not one. */
function responseRoot(samlResponse: string): Element | undefined {
  const root = parseXml(decodeBase64(samlResponse) ?? '')?.documentElement ?? undefined;
  return root && root.namespaceURI === SAML_PROTOCOL && root.localName === 'Response' ? root : undefined;
}

/** Whether the SAMLResponse is a SAML Response at all (before anything is verified): what is not is refused as such, not as unsolicited. */
export function isSamlResponse(samlResponse: string): boolean {
  return responseRoot(samlResponse) !== undefined;
}

/** The response's InResponseTo before anything is verified: only to find the sign-in it claims to answer, which verification then holds it to. */
export function claimedRequestId(samlResponse: string): string | undefined {
  const root = responseRoot(samlResponse);
  return root && attributeOf(root, 'InResponseTo');
}

function decodeBase64(value: string): string | undefined {
  const compact = value.replace(/\s+/g, '');
  return /^[A-Za-z0-9+/]+={0,2}$/.test(compact) ? Buffer.from(compact, 'base64').toString('utf8') : undefined;
}

export async function verifySamlResponse(appId: string, options: SamlOptions, idp: IdpEndpoints, samlResponse: string, expected: ResponseExpectations): Promise<VerifiedAssertion> {
  const fail = (why: string) => new ProviderError('failed', `${appId}: ${why}`);
  const root = responseRoot(samlResponse);
  if (!root) throw fail('the SAMLResponse is not a SAML Response');
  checkStatus(root, fail);
  checkAlgorithms(root, options.advanced.rejectDeprecatedAlgorithm, fail);
  await checkEncryptedAlgorithms(root, options, fail);
  const destination = attributeOf(root, 'Destination');
  if (destination !== undefined && destination !== expected.acsUrl) throw fail(`the response's Destination ${JSON.stringify(destination)} is not this ACS URL`);
  const responseIssuer = onlyChild(root, SAML_ASSERTION, 'Issuer');
  if (responseIssuer && textOf(responseIssuer) !== options.idp.entityId) throw fail('the response was issued by another IdP');
  if (attributeOf(root, 'InResponseTo') !== expected.requestId) throw fail('the response answers another request');
  if (options.advanced.wantAssertionEncrypted && children(root, SAML_ASSERTION, 'EncryptedAssertion').length === 0) throw fail('the assertion is not encrypted (want_assertion_encrypted)');

  let assertionXml: string;
  try {
    const { profile } = await serviceProvider(options, idp, expected).validatePostResponseAsync({ SAMLResponse: samlResponse });
    if (!profile) throw new Error('the response holds no assertion');
    assertionXml = profile.getAssertionXml!();
  } catch (error) {
    if (error instanceof ProviderError) throw error;
    throw fail(`the response was refused: ${error instanceof Error ? error.message : String(error)}`);
  }
  const assertion = parseXml(assertionXml)?.documentElement;
  if (!assertion || assertion.localName !== 'Assertion' || assertion.namespaceURI !== SAML_ASSERTION) throw fail('the verified assertion cannot be read');
  return readAssertion(assertion, options, expected, fail);
}

/**
 * The response's one Status must hold one top-level StatusCode, Success. Anything else (Responder,
 * Requester, a second-level AuthnFailed...) is the IdP saying it signed nobody in, whatever
 * assertion the response carries beside it. The status may be outside what the signature covers
 * (when only the assertion is signed): read here unverified, it can only make us refuse.
 */
function checkStatus(root: Element, fail: (why: string) => ProviderError): void {
  const status = onlyChild(root, SAML_PROTOCOL, 'Status');
  const code = status && onlyChild(status, SAML_PROTOCOL, 'StatusCode');
  const value = code && attributeOf(code, 'Value');
  if (!code || value === undefined) throw fail("the IdP's status is missing");
  if (value === STATUS_SUCCESS) return;
  const reason = children(code, SAML_PROTOCOL, 'StatusCode').map((inner) => attributeOf(inner, 'Value'))[0];
  throw fail(`the IdP's status is ${value}${reason === undefined ? '' : ` (${reason})`}, not Success`);
}

/**
 * Every XML signature in the document, before any is checked: only RSA with SHA-2, or SHA-1 where
 * the app allows it. (The digests of an encrypted assertion's key transport are not signatures:
 * RSA-OAEP's SHA-1 mask is not the deprecated use.)
 */
function checkAlgorithms(root: Element, rejectDeprecated: boolean, fail: (why: string) => ProviderError): void {
  const allowed = (table: Readonly<Record<string, string>>, algorithm: string | undefined) => {
    const strength = algorithm === undefined ? undefined : table[algorithm];
    return strength === 'modern' || (strength === 'deprecated' && !rejectDeprecated);
  };
  for (const signedInfo of descendants(root, XML_DSIG, 'SignedInfo')) {
    for (const method of children(signedInfo, XML_DSIG, 'SignatureMethod')) {
      if (!allowed(RSA_SIGNATURES, attributeOf(method, 'Algorithm'))) throw fail(`the signature algorithm ${JSON.stringify(attributeOf(method, 'Algorithm'))} is not accepted`);
    }
    for (const reference of children(signedInfo, XML_DSIG, 'Reference')) {
      for (const method of children(reference, XML_DSIG, 'DigestMethod')) {
        if (!allowed(DIGESTS, attributeOf(method, 'Algorithm'))) throw fail(`the digest algorithm ${JSON.stringify(attributeOf(method, 'Algorithm'))} is not accepted`);
      }
    }
  }
}

/** The signatures inside an encrypted assertion are out of sight until it is decrypted: checked then, with our key, before node-saml decrypts it again to verify it. */
async function checkEncryptedAlgorithms(root: Element, options: SamlOptions, fail: (why: string) => ProviderError): Promise<void> {
  const encrypted = children(root, SAML_ASSERTION, 'EncryptedAssertion');
  if (encrypted.length !== 1 || options.advanced.privateKey === undefined) return;
  let decrypted: Element | undefined;
  try {
    decrypted = parseXml(await decryptXml(new XMLSerializer().serializeToString(encrypted[0]!), options.advanced.privateKey))?.documentElement ?? undefined;
  } catch {
    throw fail('the encrypted assertion cannot be decrypted with our key');
  }
  if (!decrypted) throw fail('the encrypted assertion holds no XML');
  checkAlgorithms(decrypted, options.advanced.rejectDeprecatedAlgorithm, fail);
}

/**
 * node-saml for one response. Its time checks are off (acceptedClockSkewMs -1) because they read
 * the wall clock; readAssertion checks the same windows against Latchkey's clock. Its InResponseTo
 * check is off too: it trusts the Response's attribute, which is unsigned when only the assertion
 * is, and it lets an assertion without one through. verifySamlResponse and readAssertion hold
 * both the Response's and the signed SubjectConfirmationData's to the request this browser sent.
 */
function serviceProvider(options: SamlOptions, idp: IdpEndpoints, expected: ResponseExpectations): SAML {
  return new SAML({
    idpCert: idp.certificates,
    idpIssuer: options.idp.entityId,
    issuer: expected.spEntityId,
    audience: expected.spEntityId,
    callbackUrl: expected.acsUrl,
    wantAssertionsSigned: options.advanced.wantAssertionSigned,
    wantAuthnResponseSigned: options.advanced.wantMessageSigned,
    acceptedClockSkewMs: -1,
    validateInResponseTo: ValidateInResponseTo.never,
    ...(options.advanced.privateKey === undefined ? {} : { decryptionPvk: options.advanced.privateKey }),
  });
}

function readAssertion(assertion: Element, options: SamlOptions, expected: ResponseExpectations, fail: (why: string) => ProviderError): VerifiedAssertion {
  const drift = options.advanced.allowedClockDriftSeconds * 1000;
  const now = expected.now.getTime();
  const instant = (element: Element, name: string): number | undefined => {
    const value = attributeOf(element, name);
    if (value === undefined) return undefined;
    const time = Date.parse(value);
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value) || Number.isNaN(time)) throw fail(`${element.localName}@${name} is not a UTC instant`);
    return time;
  };
  const within = (element: Element, what: string): number | undefined => {
    const notBefore = instant(element, 'NotBefore');
    const notOnOrAfter = instant(element, 'NotOnOrAfter');
    if (notBefore !== undefined && now + drift < notBefore) throw fail(`the ${what} is not valid yet`);
    if (notOnOrAfter !== undefined && now - drift >= notOnOrAfter) throw fail(`the ${what} has expired`);
    return notOnOrAfter;
  };

  const issuer = onlyChild(assertion, SAML_ASSERTION, 'Issuer');
  if (!issuer || textOf(issuer) !== options.idp.entityId) throw fail('the assertion was issued by another IdP');
  const assertionId = attributeOf(assertion, 'ID');
  if (!assertionId) throw fail('the assertion has no ID');
  const subject = onlyChild(assertion, SAML_ASSERTION, 'Subject');
  const nameId = subject && onlyChild(subject, SAML_ASSERTION, 'NameID');
  if (!subject || !nameId) throw fail('the assertion has no single Subject with a NameID');

  // A bearer confirmation for our ACS URL, unexpired, answering our request (or, unsolicited, none).
  const confirmations = children(subject, SAML_ASSERTION, 'SubjectConfirmation').filter((confirmation) => attributeOf(confirmation, 'Method') === BEARER);
  const data = confirmations.flatMap((confirmation) => children(confirmation, SAML_ASSERTION, 'SubjectConfirmationData'));
  const ours = data.filter((item) => attributeOf(item, 'Recipient') === expected.acsUrl);
  if (ours.length === 0) throw fail('the assertion is not for this ACS URL (SubjectConfirmationData@Recipient)');
  const confirmation = ours[0]!;
  const confirmedUntil = within(confirmation, 'subject confirmation');
  if (confirmedUntil === undefined) throw fail('the subject confirmation has no NotOnOrAfter');
  if (attributeOf(confirmation, 'InResponseTo') !== expected.requestId) throw fail('the assertion answers another request');

  const conditions = children(assertion, SAML_ASSERTION, 'Conditions');
  if (conditions.length !== 1) throw fail('the assertion has no single Conditions');
  const conditionsUntil = within(conditions[0]!, 'assertion');

  const attributes: Record<string, string[]> = {};
  for (const statement of children(assertion, SAML_ASSERTION, 'AttributeStatement')) {
    for (const attribute of children(statement, SAML_ASSERTION, 'Attribute')) {
      const name = attributeOf(attribute, 'Name');
      if (name === undefined || name === '__proto__') continue;
      attributes[name] = [...(attributes[name] ?? []), ...children(attribute, SAML_ASSERTION, 'AttributeValue').map(textOf)];
    }
  }
  const authn = children(assertion, SAML_ASSERTION, 'AuthnStatement')[0];
  const sessionIndex = authn && attributeOf(authn, 'SessionIndex');
  const samlSubject: SamlSubject = { ...readNameId(nameId), ...(sessionIndex === undefined ? {} : { sessionIndex }) };
  return {
    person: { nameId: samlSubject.nameId, nameIdFormat: samlSubject.format, attributes },
    subject: samlSubject,
    assertionId,
    usableUntil: new Date(Math.min(confirmedUntil, conditionsUntil ?? confirmedUntil) + drift),
  };
}
