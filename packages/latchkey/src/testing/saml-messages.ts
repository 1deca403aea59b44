/**
 * The messages a test SAML identity provider reads and writes besides the Response: its own
 * metadata, the service provider's metadata, AuthnRequests in the HTTP-Redirect binding (with their
 * query-string signature), and signed LogoutRequests for single logout.
 */
import { createSign, createVerify } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Element } from '@xmldom/xmldom';
import { certificateBody, certificatePem, type TestKeyPair } from './saml-keys.js';
import { verifyPostSignature } from './saml-post-binding.js';
import {
  childElement,
  descendants,
  escapeXml,
  NAMEID_FORMAT,
  nodeHashForSigAlg,
  parseXml,
  randomSamlId,
  SAML_BINDING,
  SAML_NS,
  samlInstant,
  SIGNATURE_ALGORITHMS,
} from './saml-xml.js';

export interface ReadAuthnRequest {
  id: string;
  acsUrl: string | undefined;
  issuer: string;
  relayState: string | undefined;
  /** The URL carries a Signature parameter (whether it verifies is a separate question). */
  signed: boolean;
  /** The Redirect binding's SigAlg parameter (the signature algorithm's URI), when the URL has one. */
  sigAlg?: string;
  xml: string;
}

export interface ImportedSpMetadata {
  entityId: string;
  acsUrl: string;
  signingCertificate?: string;
  encryptionCertificate?: string;
  slsUrl?: string;
  /** SPSSODescriptor@AuthnRequestsSigned: the service provider promised to sign its requests. */
  authnRequestsSigned: boolean;
}

export function idpMetadataXml(options: { entityId: string; ssoUrl: string; sloUrl: string; certificate: string }): string {
  const keyInfo = `<ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificateBody(options.certificate)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<md:EntityDescriptor xmlns:md="${SAML_NS.metadata}" xmlns:ds="${SAML_NS.dsig}" entityID="${escapeXml(options.entityId)}">`,
    `<md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="${SAML_NS.protocol}">`,
    `<md:KeyDescriptor use="signing">${keyInfo}</md:KeyDescriptor>`,
    `<md:SingleLogoutService Binding="${SAML_BINDING.redirect}" Location="${escapeXml(options.sloUrl)}"/>`,
    `<md:NameIDFormat>${NAMEID_FORMAT.emailAddress}</md:NameIDFormat>`,
    `<md:NameIDFormat>${NAMEID_FORMAT.persistent}</md:NameIDFormat>`,
    `<md:SingleSignOnService Binding="${SAML_BINDING.redirect}" Location="${escapeXml(options.ssoUrl)}"/>`,
    `<md:SingleSignOnService Binding="${SAML_BINDING.post}" Location="${escapeXml(options.ssoUrl)}"/>`,
    '</md:IDPSSODescriptor>',
    '</md:EntityDescriptor>',
  ].join('\n');
}

/**
 * The raw (still percent-encoded) value of each query parameter. The Redirect binding signs the
 * parameters exactly as they appear in the URL (SAML Bindings 3.4.4.1), so verification must use
 * these octets and never a re-encoding of the decoded values.
 */
export function rawQueryParameters(url: URL): Map<string, string> {
  const raw = new Map<string, string>();
  for (const pair of url.search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decodeURIComponent(equals === -1 ? pair : pair.slice(0, equals));
    if (!raw.has(name)) raw.set(name, equals === -1 ? '' : pair.slice(equals + 1));
  }
  return raw;
}

/**
 * The Redirect binding DEFLATEs a message before base64 and the POST binding does not, but senders
 * mix them up (node-saml deflates its POST messages too), so both are read: XML starts with "<".
 */
export function decodeSamlMessage(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  const plain = bytes.toString('utf8');
  if (plain.trimStart().startsWith('<')) return plain;
  try {
    return inflateRawSync(bytes).toString('utf8');
  } catch {
    throw new Error('The message is neither XML nor DEFLATEd XML');
  }
}

/** Reads the AuthnRequest XML (from either binding) into the fields the identity provider acts on. */
export function readAuthnRequestXml(xml: string): Omit<ReadAuthnRequest, 'relayState' | 'signed'> {
  const root = parseXml(xml).documentElement;
  if (!root || root.namespaceURI !== SAML_NS.protocol || root.localName !== 'AuthnRequest') {
    throw new Error('Not a samlp:AuthnRequest');
  }
  const id = root.getAttribute('ID');
  if (!id) throw new Error('The AuthnRequest has no ID');
  const issuer = childElement(root, SAML_NS.assertion, 'Issuer')?.textContent?.trim();
  if (!issuer) throw new Error('The AuthnRequest has no Issuer');
  return { id, acsUrl: root.getAttribute('AssertionConsumerServiceURL') ?? undefined, issuer, xml };
}

export function readRedirectAuthnRequest(url: string | URL): ReadAuthnRequest {
  const parsed = new URL(url);
  const samlRequest = parsed.searchParams.get('SAMLRequest');
  if (samlRequest === null) throw new Error('The URL has no SAMLRequest parameter');
  const sigAlg = parsed.searchParams.get('SigAlg');
  return {
    ...readAuthnRequestXml(decodeSamlMessage(samlRequest)),
    relayState: parsed.searchParams.get('RelayState') ?? undefined,
    signed: parsed.searchParams.has('Signature'),
    ...(sigAlg === null ? {} : { sigAlg }),
  };
}

/**
 * Verifies a Redirect-binding signature: SAMLRequest (or SAMLResponse), RelayState when present,
 * and SigAlg, joined by & in that order, as they appear in the URL. False when the signature is
 * absent, the algorithm unknown, or the signature wrong.
 */
export function verifyRedirectSignature(url: string | URL, certificate: string): boolean {
  const raw = rawQueryParameters(new URL(url));
  const message = raw.has('SAMLRequest') ? 'SAMLRequest' : 'SAMLResponse';
  const signature = raw.get('Signature');
  const sigAlg = raw.get('SigAlg');
  const payload = raw.get(message);
  if (signature === undefined || sigAlg === undefined || payload === undefined) return false;
  const hash = nodeHashForSigAlg(decodeURIComponent(sigAlg));
  if (hash === undefined) return false;
  const relayState = raw.get('RelayState');
  const signedText = [`${message}=${payload}`, ...(relayState === undefined ? [] : [`RelayState=${relayState}`]), `SigAlg=${sigAlg}`].join('&');
  try {
    return createVerify(hash).update(signedText).verify(certificate, decodeURIComponent(signature), 'base64');
  } catch {
    return false;
  }
}

function keyDescriptorCertificate(descriptor: Element): string | undefined {
  const body = descendants(descriptor, SAML_NS.dsig, 'X509Certificate')[0]?.textContent;
  return body ? certificatePem(body) : undefined;
}

/** A POST endpoint among these: the default one, else the lowest index, else the first. */
function postEndpoint(endpoints: Element[]): Element | undefined {
  const post = endpoints.filter((endpoint) => endpoint.getAttribute('Binding') === SAML_BINDING.post);
  const byIndex = [...post].sort((a, b) => Number(a.getAttribute('index') ?? 0) - Number(b.getAttribute('index') ?? 0));
  return post.find((endpoint) => endpoint.getAttribute('isDefault') === 'true') ?? byIndex[0];
}

/** Reads what an identity provider's administrator takes from a service provider's metadata. */
export function readSpMetadata(xml: string): ImportedSpMetadata {
  const document = parseXml(xml);
  const entity = descendants(document, SAML_NS.metadata, 'EntityDescriptor')[0];
  const sp = entity && descendants(entity, SAML_NS.metadata, 'SPSSODescriptor')[0];
  const entityId = entity?.getAttribute('entityID');
  if (!entity || !sp || !entityId) throw new Error('Not service provider metadata: no EntityDescriptor with an SPSSODescriptor');
  const acsUrl = postEndpoint(descendants(sp, SAML_NS.metadata, 'AssertionConsumerService'))?.getAttribute('Location');
  if (!acsUrl) throw new Error('The service provider metadata has no HTTP-POST AssertionConsumerService');
  const imported: ImportedSpMetadata = { entityId, acsUrl, authnRequestsSigned: sp.getAttribute('AuthnRequestsSigned') === 'true' };
  for (const descriptor of descendants(sp, SAML_NS.metadata, 'KeyDescriptor')) {
    const use = descriptor.getAttribute('use');
    const certificate = keyDescriptorCertificate(descriptor);
    // A KeyDescriptor without `use` serves both purposes (SAML Metadata 2.4.1.1).
    if (use !== 'encryption' && imported.signingCertificate === undefined) imported.signingCertificate = certificate;
    if (use !== 'signing' && imported.encryptionCertificate === undefined) imported.encryptionCertificate = certificate;
  }
  const logoutServices = descendants(sp, SAML_NS.metadata, 'SingleLogoutService');
  const sls = logoutServices.find((service) => service.getAttribute('Binding') === SAML_BINDING.redirect) ?? logoutServices[0];
  const slsUrl = sls?.getAttribute('Location');
  if (slsUrl) imported.slsUrl = slsUrl;
  return imported;
}

/** The enveloped signature over a metadata document, as a careful IdP checks it before importing the document. */
export interface MetadataSignature {
  signatureAlgorithm: string | undefined;
  digestAlgorithm: string | undefined;
  /** The signature's one reference is the EntityDescriptor itself, and it verifies with `certificate`. */
  verifies: boolean;
}

/** The signature of a metadata document (a child of its EntityDescriptor), or undefined when it is unsigned. */
export function readMetadataSignature(xml: string, certificate: string): MetadataSignature | undefined {
  const root = parseXml(xml).documentElement;
  const signature = root ? childElement(root, SAML_NS.dsig, 'Signature') : undefined;
  if (!root || signature === undefined) return undefined;
  const algorithmOf = (localName: string) => descendants(signature, SAML_NS.dsig, localName)[0]?.getAttribute('Algorithm') ?? undefined;
  return {
    signatureAlgorithm: algorithmOf('SignatureMethod'),
    digestAlgorithm: algorithmOf('DigestMethod'),
    verifies: verifyPostSignature(xml, certificate) === true,
  };
}

/** What a LogoutRequest names: whose sessions to end, and which of them. */
export interface LogoutRequestOptions {
  slsUrl: string;
  nameId: string;
  /** NameID@Format; left out by default. */
  nameIdFormat?: string;
  /** NameID@NameQualifier; left out by default. */
  nameQualifier?: string;
  /** One SessionIndex, several, or none (then the request is for every session of the NameID). */
  sessionIndex?: string | string[];
  now: Date;
}

/** A LogoutRequest in the Redirect binding, signed by the identity provider's key with RSA-SHA256. */
export function signedLogoutRequestUrl(options: LogoutRequestOptions & { issuer: string; key: TestKeyPair }): string {
  const sessionIndexes = options.sessionIndex === undefined ? [] : [options.sessionIndex].flat();
  const nameIdAttributes = [
    ...(options.nameIdFormat === undefined ? [] : [` Format="${escapeXml(options.nameIdFormat)}"`]),
    ...(options.nameQualifier === undefined ? [] : [` NameQualifier="${escapeXml(options.nameQualifier)}"`]),
  ].join('');
  const xml = [
    `<samlp:LogoutRequest xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}"`,
    ` ID="${randomSamlId()}" Version="2.0" IssueInstant="${samlInstant(options.now)}" Destination="${escapeXml(options.slsUrl)}">`,
    `<saml:Issuer>${escapeXml(options.issuer)}</saml:Issuer>`,
    `<saml:NameID${nameIdAttributes}>${escapeXml(options.nameId)}</saml:NameID>`,
    ...sessionIndexes.map((sessionIndex) => `<samlp:SessionIndex>${escapeXml(sessionIndex)}</samlp:SessionIndex>`),
    '</samlp:LogoutRequest>',
  ].join('');
  const algorithm = SIGNATURE_ALGORITHMS.sha256;
  // encodeURIComponent leaves nothing in base64 or the SigAlg URI ambiguous, and the URL below
  // carries exactly the octets signed here.
  const signedText = `SAMLRequest=${encodeURIComponent(deflateRawSync(xml).toString('base64'))}&SigAlg=${encodeURIComponent(algorithm.signature)}`;
  const signature = createSign(algorithm.nodeHash).update(signedText).sign(options.key.privateKey, 'base64');
  const separator = options.slsUrl.includes('?') ? '&' : '?';
  return `${options.slsUrl}${separator}${signedText}&Signature=${encodeURIComponent(signature)}`;
}

/** A service provider's LogoutResponse, as the identity provider's SLO URL reads it from the Redirect binding. */
export interface ReadLogoutResponse {
  inResponseTo: string | undefined;
  /** The StatusCode values, the top-level one first, then any nested inside it. */
  statusCodes: string[];
}

export function readRedirectLogoutResponse(url: string | URL): ReadLogoutResponse {
  const samlResponse = new URL(url).searchParams.get('SAMLResponse');
  if (samlResponse === null) throw new Error('The URL has no SAMLResponse parameter');
  const root = parseXml(decodeSamlMessage(samlResponse)).documentElement;
  if (!root || root.namespaceURI !== SAML_NS.protocol || root.localName !== 'LogoutResponse') throw new Error('Not a samlp:LogoutResponse');
  return {
    inResponseTo: root.getAttribute('InResponseTo') ?? undefined,
    statusCodes: descendants(root, SAML_NS.protocol, 'StatusCode').map((code) => code.getAttribute('Value') ?? ''),
  };
}
